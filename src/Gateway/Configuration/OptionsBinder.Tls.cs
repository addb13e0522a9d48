using System.Net.Security;
using System.Security.Authentication;
using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Configuration;

internal sealed partial class OptionsBinder
{
    /// <summary><c>tls { }</c> keys nats-server knows that Courier accepts but ignores (warned, never fatal).</summary>
    /// <summary>
    /// What decides whom the server trusts (pinned certificates, OCSP, the certificate store, stricter
    /// verification) is refused; a curve list, a handshake rate limit, <c>insecure</c> (client side: left
    /// out, verification is only stricter) and SNI certificate lists are warned.
    /// </summary>
    private static readonly UnimplementedKeys UnimplementedTls = new(
        warned: ["insecure", "curve_preferences", "connection_rate_limit", "certs"],
        refused:
        [
            "pinned_certs", "ocsp_peer", "verify_cert_and_check_known_urls", "cert_store", "cert_match_by",
            "cert_match", "ca_certs_match", "cert_match_skip_invalid",
        ]);

    /// <summary>
    /// <c>tls { }</c>, as nats-server's parseTLS: an unknown key is an error
    /// (<c>error parsing tls config, unknown field ["x"]</c>), wrong types name the key. The
    /// certificate files are loaded here, so a bad file is reported at the block's position.
    /// </summary>
    private TlsSettings? BindTlsSettings(ConfigEntry entry, bool remote = false)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"expected a block for \"{entry.Key}\", got {Describe(entry.Value)}");
            return null;
        }

        var settings = new TlsSettings();
        var errors = _errors.Count;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "cert_file":
                    settings = settings with { CertFile = TlsString(e, "expected 'cert_file' to be filename") };
                    break;
                case "key_file":
                    settings = settings with { KeyFile = TlsString(e, "expected 'key_file' to be filename") };
                    break;
                case "ca_file":
                    settings = settings with { CaFile = TlsString(e, "expected 'ca_file' to be filename") };
                    break;
                case "verify":
                    settings = settings with { Verify = TlsBool(e) };
                    break;
                case "verify_and_map":
                    settings = settings with { VerifyAndMap = TlsBool(e) };
                    break;
                case "timeout":
                    settings = settings with { Timeout = TlsTimeout(e) };
                    break;
                case "handshake_first" or "first" or "immediate":
                    settings = settings with { HandshakeFirst = HandshakeFirst(e) };
                    break;
                case "cipher_suites":
                    settings = settings with { CipherSuites = CipherSuites(e) };
                    break;
                case "min_version":
                    settings = settings with { MinVersion = MinVersion(e) };
                    break;
                case "insecure" when remote:
                    settings = settings with { Insecure = TlsBool(e) };
                    break;
                default:
                    if (UnimplementedTls.IsWarned(e.Key))
                    {
                        Warn(e, $"field \"{e.Key}\" is not supported by Courier and is ignored");
                    }
                    else if (UnimplementedTls.IsRefused(e.Key))
                    {
                        Error(e, UnimplementedKeys.RefusedReason(e.Key));
                    }
                    else if (!e.IsUsedAsVariable)
                    {
                        Error(e, $"error parsing tls config, unknown field [\"{e.Key}\"]");
                    }

                    break;
            }
        }

        return _errors.Count == errors ? settings : null;
    }

    /// <summary>The top-level <c>tls { }</c>: the client listener's (and HTTPS monitoring's) TLS.</summary>
    private void BindTls(ConfigEntry entry) => _options.Tls = LoadTls(entry) ?? _options.Tls;

    /// <summary>
    /// A listener's <c>tls { }</c> block, bound and its files loaded; null (with the error recorded) when
    /// it is wrong. <paramref name="alwaysVerify"/>: peer certificates are required whatever <c>verify</c> says (routes).
    /// </summary>
    private TlsOptions? LoadTls(ConfigEntry entry, bool alwaysVerify = false)
    {
        if (BindTlsSettings(entry) is not { } settings)
        {
            return null;
        }

        try
        {
            return (alwaysVerify ? settings with { Verify = true } : settings).Load();
        }
        catch (InvalidDataException e)
        {
            Error(entry, e.Message);
            return null;
        }
    }

    /// <summary>
    /// The <c>tls { }</c> of a leaf node listener or a gateway (<paramref name="block"/> names it): as a
    /// listener's, but keys Courier does not implement for these links are refused: <c>verify_and_map</c>
    /// (a leaf or gateway named by its certificate) and <c>handshake_first</c> (nats-server 2.10's TLS
    /// before INFO for leafs; 2.9's order is taken). <paramref name="alwaysVerify"/>: gateways, as routes.
    /// </summary>
    private TlsOptions? LoadLinkTls(ConfigEntry entry, string block, bool alwaysVerify)
    {
        if (!RefuseTlsKeys(entry, block, "verify_and_map", "handshake_first", "first", "immediate"))
        {
            return null;
        }

        return LoadTls(entry, alwaysVerify);
    }

    /// <summary>
    /// A leaf node remote's <c>tls { }</c>, the dialling side (nats-server's parseRemoteLeafNodes):
    /// <c>ca_file</c> checks the hub's certificate, <c>cert_file</c>/<c>key_file</c> (optional) answer a hub
    /// that verifies, <c>insecure</c> checks nothing, <c>timeout</c>, <c>cipher_suites</c>, <c>min_version</c>.
    /// <c>verify</c> is the accepting side's and means nothing here (nats-server ignores it too: warned);
    /// <c>verify_and_map</c> and <c>handshake_first</c> are refused.
    /// </summary>
    private RemoteTlsOptions? LoadRemoteTls(ConfigEntry entry)
    {
        if (!RefuseTlsKeys(entry, "a leafnode remote's", "verify_and_map", "handshake_first", "first", "immediate"))
        {
            return null;
        }

        if (entry.Value is ConfigMap block)
        {
            foreach (var e in block.Entries)
            {
                if (e.Key.Equals("verify", StringComparison.OrdinalIgnoreCase))
                {
                    Warn(e, "field \"verify\" has no effect in a leafnode remote's tls block (it is the accepting side's)");
                }
            }
        }

        if (BindTlsSettings(entry, remote: true) is not { } settings)
        {
            return null;
        }

        if (settings.Insecure)
        {
            // nats-server's leafnodeTLSInsecureWarning.
            Warn(entry, "TLS certificate chain and hostname of solicited leafnodes will not be verified. DO NOT USE IN PRODUCTION!");
        }

        try
        {
            return settings.LoadRemote();
        }
        catch (InvalidDataException e)
        {
            Error(entry, e.Message);
            return null;
        }
    }

    /// <summary>Errors for each of <paramref name="keys"/> set in the block; false when there was one.</summary>
    private bool RefuseTlsKeys(ConfigEntry entry, string block, params string[] keys)
    {
        var ok = true;
        if (entry.Value is ConfigMap map)
        {
            foreach (var e in map.Entries)
            {
                if (keys.Contains(e.Key, StringComparer.OrdinalIgnoreCase))
                {
                    Error(e, $"field \"{e.Key}\" in {block} tls block is not implemented by Courier, and as it concerns security a config that sets it is refused");
                    ok = false;
                }
            }
        }

        return ok;
    }

    private string? TlsString(ConfigEntry entry, string expected)
    {
        if (entry.Value is string s)
        {
            return s;
        }

        Error(entry, $"error parsing tls config, {expected}");
        return null;
    }

    private bool TlsBool(ConfigEntry entry)
    {
        if (entry.Value is bool b)
        {
            return b;
        }

        Error(entry, $"error parsing tls config, expected '{entry.Key}' to be a boolean");
        return false;
    }

    /// <summary><c>timeout</c>: seconds (integer or float) or a duration string.</summary>
    private TimeSpan TlsTimeout(ConfigEntry entry)
    {
        switch (entry.Value)
        {
            case long seconds when seconds is >= 0 and <= int.MaxValue:
                return seconds == 0 ? TlsOptions.DefaultTimeout : TimeSpan.FromSeconds(seconds);
            case double seconds when seconds is >= 0 and <= int.MaxValue:
                return seconds == 0 ? TlsOptions.DefaultTimeout : TimeSpan.FromSeconds(seconds);
            case string s:
                if (GoDuration.TryParse(s, out var d, out var error) && d >= TimeSpan.Zero)
                {
                    return d == TimeSpan.Zero ? TlsOptions.DefaultTimeout : d;
                }

                Error(entry, $"error parsing tls config, 'timeout' {error ?? "must not be negative"}");
                return TlsOptions.DefaultTimeout;
            default:
                Error(entry, "error parsing tls config, 'timeout' wrong type");
                return TlsOptions.DefaultTimeout;
        }
    }

    /// <summary><c>handshake_first</c> (nats-server 2.10): a bool, or <c>true</c>/<c>on</c>/<c>false</c>/<c>off</c>.</summary>
    private bool HandshakeFirst(ConfigEntry entry)
    {
        switch (entry.Value)
        {
            case bool b:
                return b;
            case string s when s.Equals("true", StringComparison.OrdinalIgnoreCase) || s.Equals("on", StringComparison.OrdinalIgnoreCase):
                return true;
            case string s when s.Equals("false", StringComparison.OrdinalIgnoreCase) || s.Equals("off", StringComparison.OrdinalIgnoreCase):
                return false;
            case string s:
                // nats-server 2.10 also takes "auto" or a fallback delay (serve plain clients after a pause); Courier does not.
                Error(entry, $"field \"{entry.Key}\"'s value \"{s}\" is invalid (true, false, on or off)");
                return false;
            default:
                Error(entry, $"field \"{entry.Key}\" should be a boolean or a string, got {Describe(entry.Value)}");
                return false;
        }
    }

    /// <summary><c>cipher_suites</c>: Go's names (server/ciphersuites.go); TLS 1.3's suites are always on.</summary>
    private List<TlsCipherSuite>? CipherSuites(ConfigEntry entry)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"error parsing tls config, 'cipher_suites' must be an array, got {Describe(entry.Value)}");
            return null;
        }

        if (list.Count == 0)
        {
            Error(entry, "error parsing tls config, 'cipher_suites' cannot be empty");
            return null;
        }

        var suites = new List<TlsCipherSuite>(list.Count);
        foreach (var item in list)
        {
            if (item is string name && CipherSuiteNames.TryParse(name, out var suite))
            {
                suites.Add(suite);
            }
            else
            {
                Error(entry, $"unrecognized cipher {item}");
                return null;
            }
        }

        return suites;
    }

    /// <summary><c>min_version</c> (nats-server 2.10): "1.2" or "1.3"; older versions are refused.</summary>
    private SslProtocols MinVersion(ConfigEntry entry)
    {
        switch (entry.Value)
        {
            case "1.2":
                return SslProtocols.Tls12;
            case "1.3":
                return SslProtocols.Tls13;
            case "1.0" or "1.1":
                Error(entry, $"error parsing tls config: unsupported TLS version: TLS {entry.Value}");
                return SslProtocols.Tls12;
            case string s:
                Error(entry, $"error parsing tls config: unknown version: {s}");
                return SslProtocols.Tls12;
            default:
                Error(entry, $"error parsing tls config: 'min_version' wrong type: {Describe(entry.Value)}");
                return SslProtocols.Tls12;
        }
    }

}
