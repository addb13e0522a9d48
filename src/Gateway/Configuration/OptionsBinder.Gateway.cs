using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>gateway { }</c>, as nats-server 2.9's parseGateway and parseGateways (server/opts.go).</summary>
internal sealed partial class OptionsBinder
{
    /// <summary>
    /// <c>gateway { }</c> keys nats-server has that Courier does not implement: refused (a gateway concerns
    /// security and what reaches whom; starting without them would pretend).
    /// </summary>
    private static readonly UnimplementedKeys UnimplementedGateway = new(
        warned: [],
        refused: ["advertise", "gateway_advertise"]);


    private void BindGateway(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"Expected gateway to be a map, got {Describe(entry.Value)}");
            return;
        }

        _gatewayEntry = entry;
        var gateway = _options.Gateway;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "name":
                    if (TryString(e, out var name))
                    {
                        if (name.Contains(' ', StringComparison.Ordinal))
                        {
                            Error(e, "gateway name cannot contain spaces"); // nats-server's ErrGatewayNameHasSpaces
                        }
                        else
                        {
                            gateway.Name = name;
                        }
                    }

                    break;
                case "listen":
                    if (TryHostPort(e, out var host, out var port))
                    {
                        gateway.Host = host ?? gateway.Host;
                        gateway.Port = port;
                    }

                    break;
                case "port":
                    if (TryPort(e, out port))
                    {
                        gateway.Port = port;
                    }

                    break;
                case "host" or "net":
                    if (TryString(e, out var s))
                    {
                        gateway.Host = s;
                    }

                    break;
                case "authorization":
                    BindGatewayAuthorization(e, gateway);
                    break;
                case "gateways":
                    BindGatewayRemotes(e, gateway);
                    break;
                case "reject_unknown" or "reject_unknown_cluster":
                    if (TryBool(e, out var reject))
                    {
                        gateway.RejectUnknown = reject;
                    }

                    break;
                case "connect_retries":
                    if (TryInt(e, out var retries))
                    {
                        gateway.ConnectRetries = retries;
                    }

                    break;
                case "tls":
                    // nats-server's getTLSConfig for gateways: the peer's certificate always required and verified.
                    gateway.Tls = LoadLinkTls(e, "gateway", alwaysVerify: true) ?? gateway.Tls;
                    break;
                default:
                    Unknown(e, UnimplementedGateway);
                    break;
            }
        }

        if (gateway.Tls is { } tls && !HasAuthorizationTimeout(block))
        {
            gateway.AuthTimeout = tls.Timeout + TimeSpan.FromSeconds(1); // nats-server's getDefaultAuthTimeout with TLS
        }

        foreach (var remote in gateway.Remotes)
        {
            if (gateway.Tls is null && remote.Tls is null && remote.Urls.Find(u => u.Scheme == "tls") is { } tlsUrl)
            {
                // nats-server decides TLS by the tls block alone and would dial this in the clear.
                Error(entry, $"gateway url \"{tlsUrl}\" asks for TLS but neither the gateway nor its entry has a tls block");
            }
        }

        if (gateway.Name is null)
        {
            Error(entry, "gateway has no name"); // nats-server's validateGatewayOptions: "gateway has no name"
        }
    }

    /// <summary>
    /// nats-server's validateOptions: a cluster's name must be its gateway's name (without one, the cluster
    /// takes the gateway's name, as nats-server does).
    /// </summary>
    private void ValidateGateway()
    {
        if (_gatewayEntry is not { } entry || _options.Gateway.Name is not { } name)
        {
            return;
        }

        if (_options.Cluster.Name is { Length: > 0 } cluster && cluster != name)
        {
            Error(entry, "cluster name conflicts between cluster and gateway definitions"); // nats-server's ErrClusterNameConfigConflict
        }
        else if (_options.Cluster.Enabled)
        {
            _options.Cluster.Name = name;
        }
    }

    /// <summary><c>gateway.authorization { user, password, timeout }</c>, as nats-server's parseGateway (no token, no users).</summary>
    private void BindGatewayAuthorization(ConfigEntry entry, GatewayOptions gateway)
    {
        var auth = BindSimpleAuthorization(entry, other => Unknown(other, UnimplementedAuthorization));
        if (auth is null)
        {
            return;
        }

        if (auth.Token is not null)
        {
            Error(entry, "Gateway authorization does not allow token"); // nats-server's parseGateway
        }

        (gateway.Username, gateway.Password) = (auth.Username ?? gateway.Username, auth.Password ?? gateway.Password);
        gateway.AuthTimeout = auth.Timeout ?? gateway.AuthTimeout;
    }

    /// <summary><c>gateways = [ { name, url | urls } ]</c>, as nats-server's parseGateways.</summary>
    private void BindGatewayRemotes(ConfigEntry entry, GatewayOptions gateway)
    {
        if (entry.Value is not List<object?> list)
        {
            Error(entry, $"Expected gateways field to be an array, got {Describe(entry.Value)}");
            return;
        }

        foreach (var item in list)
        {
            if (item is not ConfigMap map)
            {
                Error(entry, $"Expected gateway entry to be a map/struct, got {Describe(item)}");
                continue;
            }

            string? name = null;
            TlsOptions? tls = null;
            var urls = new List<Uri>();
            foreach (var e in map.Entries)
            {
                switch (e.Key.ToLowerInvariant())
                {
                    case "name":
                        if (TryString(e, out var s))
                        {
                            name = s;
                        }

                        break;
                    case "url" or "urls":
                        IEnumerable<object?> values = e.Value is List<object?> many ? many : [e.Value];
                        foreach (var value in values)
                        {
                            if (value is not string text)
                            {
                                Error(e, $"Expected gateway url to be a string, got {Describe(value)}");
                            }
                            else if (!RouteUrls.TryParse(text, out var url))
                            {
                                Error(e, $"Error parsing gateway url \"{text}\"");
                            }
                            else
                            {
                                urls.Add(url); // tls:// or nats://: TLS is the gateway block's (checked after it)
                            }
                        }

                        break;
                    case "tls":
                        // nats-server's parseGateways: getTLSConfig, for dials to this gateway.
                        tls = LoadLinkTls(e, "a gateways entry's", alwaysVerify: true);
                        break;
                    default:
                        Unknown(e, UnimplementedKeys.None);
                        break;
                }
            }

            if (name is null)
            {
                Error(entry, "gateway entry requires a name");
                continue;
            }

            if (urls.Count == 0)
            {
                Error(entry, $"gateway \"{name}\" has no URL"); // nats-server's validateGatewayOptions
                continue;
            }

            var remote = new GatewayRemote(name) { Tls = tls };
            remote.Urls.AddRange(urls);
            gateway.Remotes.Add(remote);
        }
    }
}
