using System.Text.RegularExpressions;
using Courier.Actors.Server;
using Courier.Actors.Server.Identity;
using NATS.NKeys;

namespace Courier.Gateway.Configuration;

/// <summary>
/// JWT operator mode: <c>operator</c>, <c>system_account</c>, <c>resolver</c>, <c>resolver_preload</c>
/// (nats-server's processConfigFileLine and validateTrustedOperators).
/// </summary>
internal sealed partial class OptionsBinder
{
    private ConfigEntry? _operatorEntry;
    private ConfigEntry? _resolverEntry;
    private string? _operatorsSystemAccount;
    private string? _configuredSystemAccount;
    private readonly List<string> _operatorsSystemAccounts = [];

    private OperatorOptions OperatorMode => _options.Operator ??= new OperatorOptions();

    /// <summary><c>operator</c>: a JWT file name or an inline JWT, or a list of them.</summary>
    private void BindOperator(ConfigEntry entry)
    {
        _operatorEntry = entry;
        List<string> values = [];
        switch (entry.Value)
        {
            case string s:
                values.Add(s);
                break;
            case List<object?> list when list.All(v => v is string):
                values.AddRange(list.Cast<string>());
                break;
            default:
                Error(entry, $"error parsing operators: unsupported type {Describe(entry.Value)}");
                return;
        }

        foreach (var value in values)
        {
            string text;
            try
            {
                text = File.ReadAllText(value);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
            {
                // Not a readable file: it may be the JWT itself, inline (nats-server's readOperatorJWT).
                if (!value.StartsWith(NatsJwt.Prefix, StringComparison.Ordinal))
                {
                    Error(entry, $"error parsing operator JWT: open {value}: {e.Message}");
                    continue;
                }

                text = value;
            }

            var jwt = NatsJwt.ParseDecorated(text);
            if (jwt is null)
            {
                Error(entry, "error parsing operator JWT: no JWT found");
                continue;
            }

            var claims = NatsJwt.Decode(jwt, IdentityJsonContext.Default.OperatorClaims, PrefixByte.Operator, PrefixByte.Operator, out var error);
            if (claims is null)
            {
                Error(entry, $"error parsing operator JWT: {error}");
                continue;
            }

            OperatorMode.OperatorJwts.Add(jwt);
            _operatorsSystemAccounts.Add(claims.Nats?.SystemAccount ?? "");
            if (OperatorMode.OperatorJwts.Count == 1)
            {
                _operatorsSystemAccount = claims.Nats?.SystemAccount;
            }
        }
    }

    /// <summary><c>system_account</c>: the system account's public key (wins over the operator JWT's).</summary>
    private void BindSystemAccount(ConfigEntry entry)
    {
        if (TryString(entry, out var account))
        {
            _configuredSystemAccount = account;
        }
    }

    /// <summary><c>resolver: MEMORY</c>, or <c>resolver { type: full|cache, dir: ... }</c>.</summary>
    private void BindResolver(ConfigEntry entry)
    {
        _resolverEntry = entry;
        switch (entry.Value)
        {
            case string s when Regex.IsMatch(s, "(?i)(MEM|MEMORY)\\s*"):
                OperatorMode.Resolver = AccountResolverKind.Memory;
                break;
            case string s when s.StartsWith("URL", StringComparison.OrdinalIgnoreCase):
                Warn(entry, "the URL account resolver is not supported by Courier; use MEMORY or a directory resolver");
                _resolverEntry = null;
                break;
            case string:
                Error(entry, "error parsing account resolver, should be MEM or  URL(\"url\") or a map containing dir and type state=[FULL|CACHE])");
                break;
            case ConfigMap map:
                BindDirectoryResolver(entry, map);
                break;
            default:
                Error(entry, $"error parsing operator resolver, wrong type {Describe(entry.Value)}");
                break;
        }
    }

    private void BindDirectoryResolver(ConfigEntry entry, ConfigMap map)
    {
        string? dir = null, type = null;
        foreach (var e in map.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "dir":
                    if (TryString(e, out var s))
                    {
                        dir = s;
                    }

                    break;
                case "type":
                    if (TryString(e, out s))
                    {
                        type = s;
                    }

                    break;
                case "allow_delete" or "limit" or "ttl" or "interval" or "timeout":
                    Warn(e, $"field \"{e.Key}\" of the directory resolver is not supported by Courier and is ignored");
                    break;
                default:
                    Ignored(e); // nats-server reads only its keys from the map
                    break;
            }
        }

        if (string.IsNullOrEmpty(dir))
        {
            Error(entry, "dir has no value and needs to point to a directory");
            return;
        }

        if (File.Exists(dir))
        {
            Error(entry, "dir needs to point to an accessible directory");
            return;
        }

        switch (type?.ToUpperInvariant())
        {
            case "FULL":
                OperatorMode.Resolver = AccountResolverKind.Full;
                break;
            case "CACHE":
                OperatorMode.Resolver = AccountResolverKind.Cache;
                break;
            default:
                Error(entry, "error parsing account resolver, should be MEM or  URL(\"url\") or a map containing dir and type state=[FULL|CACHE])");
                return;
        }

        OperatorMode.ResolverDirectory = dir;
    }

    /// <summary><c>resolver_preload { ACCOUNT_PUBLIC_KEY: ACCOUNT_JWT, ... }</c>.</summary>
    private void BindResolverPreload(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap map)
        {
            Error(entry, "preload should be a map of account_public_key:account_jwt");
            return;
        }

        foreach (var e in map.Entries)
        {
            if (e.Value is not string jwt)
            {
                Error(e, "preload map value should be a string JWT");
                continue;
            }

            if (NatsJwt.Decode(jwt, IdentityJsonContext.Default.AccountClaims, PrefixByte.Operator, PrefixByte.Account, out _) is null)
            {
                Error(e, "invalid account JWT");
                continue;
            }

            OperatorMode.Preload[e.Key] = jwt;
        }
    }

    /// <summary>After every key: nats-server's validateTrustedOperators, and the system account's precedence.</summary>
    private void ValidateOperator()
    {
        if (_options.Operator is not { } op)
        {
            _options.SystemAccount = _configuredSystemAccount; // the account of that name (nats-server: $SYS when none)
            return;
        }

        if (op.OperatorJwts.Count == 0)
        {
            // A resolver or preload without an operator: nats-server ignores them too.
            _options.Operator = null;
            return;
        }

        var at = _operatorEntry!;
        if (_resolverEntry is null)
        {
            Error(at, "operators require an account resolver to be configured");
            return;
        }

        if (_options.Users.Count > 0 || _options.NkeyUsers.Count > 0 || _options.Username is not null || _options.Token is not null)
        {
            Error(at, "operators do not allow users to be configured directly");
            return;
        }

        if (_configuredSystemAccount is { } configured)
        {
            if (_operatorsSystemAccounts.Any(a => a.Length > 0) && !_operatorsSystemAccounts.Contains(configured))
            {
                Error(at, "system_account in config and operator JWT must be identical");
                return;
            }

            op.SystemAccount = configured;
        }
        else
        {
            op.SystemAccount = string.IsNullOrEmpty(_operatorsSystemAccount) ? null : _operatorsSystemAccount;
            if (op.SystemAccount is null && op.Resolver is not AccountResolverKind.Memory)
            {
                Error(at, "using nats based account resolver - the system account needs to be specified in configuration or the operator jwt");
            }
        }
    }
}
