using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>cluster { }</c>, as nats-server's parseCluster and parseURLs (server/opts.go).</summary>
internal sealed partial class OptionsBinder
{
    /// <summary><c>cluster { }</c> keys nats-server has that Courier accepts but ignores.</summary>
    /// <summary>Route permissions (what a route may import and export) are refused.</summary>
    private static readonly UnimplementedKeys UnimplementedCluster = new(
        warned: ["pool_size", "accounts", "compression", "ping_interval", "ping_max"],
        refused: ["permissions"]);

    private void BindCluster(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"Expected map to define cluster, got {Describe(entry.Value)}");
            return;
        }

        var cluster = _options.Cluster;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "name":
                    if (TryString(e, out var s))
                    {
                        if (s.Contains(' '))
                        {
                            Error(e, "cluster name cannot contain spaces or new lines");
                        }
                        else
                        {
                            cluster.Name = s;
                        }
                    }

                    break;
                case "listen":
                    if (TryHostPort(e, out var host, out var port))
                    {
                        cluster.Host = host ?? cluster.Host;
                        cluster.Port = port;
                    }

                    break;
                case "port":
                    if (TryPort(e, out port))
                    {
                        cluster.Port = port;
                    }

                    break;
                case "host" or "net":
                    if (TryString(e, out s))
                    {
                        cluster.Host = s;
                    }

                    break;
                case "authorization":
                    BindClusterAuthorization(e, cluster);
                    break;
                case "routes":
                    BindRoutes(e, cluster);
                    break;
                case "cluster_advertise" or "advertise":
                    if (TryString(e, out s))
                    {
                        cluster.Advertise = s;
                    }

                    break;
                case "akka_port":
                    // Courier's own: Akka.Remote's listen port (default 0, ephemeral).
                    if (TryPort(e, out port))
                    {
                        cluster.AkkaPort = Math.Max(port, 0);
                    }

                    break;
                case "akka_advertise":
                    // Courier's own: host:port peers reach Akka.Remote on (a proxy or port forward).
                    if (TryHostPort(e, out host, out port))
                    {
                        if (host is null || port <= 0)
                        {
                            Error(e, "akka_advertise must be host:port");
                        }
                        else
                        {
                            cluster.AkkaAdvertise = $"{host}:{port}";
                        }
                    }

                    break;
                case "no_advertise":
                    if (TryBool(e, out var b))
                    {
                        cluster.NoAdvertise = b;
                    }

                    break;
                case "connect_retries":
                    if (TryInt(e, out var i))
                    {
                        cluster.ConnectRetries = i;
                    }

                    break;
                case "tls":
                    // nats-server's getTLSConfig for routes: the peer's certificate is always required and verified.
                    cluster.Tls = LoadTls(e, alwaysVerify: true) ?? cluster.Tls;
                    break;
                default:
                    Unknown(e, UnimplementedCluster);
                    break;
            }
        }
    }

    /// <summary>
    /// <c>cluster.authorization</c>: one user and password and a timeout; a users list or a token is
    /// refused with nats-server's errors.
    /// </summary>
    private void BindClusterAuthorization(ConfigEntry entry, ClusterOptions cluster)
    {
        var auth = BindSimpleAuthorization(entry, other =>
        {
            if (other.Key.Equals("users", StringComparison.OrdinalIgnoreCase))
            {
                Error(entry, "Cluster authorization does not allow multiple users");
            }
            else
            {
                Unknown(other, UnimplementedAuthorization);
            }
        });
        if (auth is null)
        {
            return;
        }

        if (auth.Token is not null)
        {
            Error(entry, "Cluster authorization does not support tokens");
        }

        (cluster.Username, cluster.Password) = (auth.Username ?? cluster.Username, auth.Password ?? cluster.Password);
        cluster.AuthTimeout = auth.Timeout ?? cluster.AuthTimeout;
    }

    /// <summary><c>routes: [url, ...]</c>; a duplicate is a warning, an unparsable URL an error (parseURLs).</summary>
    private void BindRoutes(ConfigEntry entry, ClusterOptions cluster)
    {
        IEnumerable<object?> values = entry.Value is List<object?> list ? list : [entry.Value];
        var seen = new HashSet<string>(StringComparer.Ordinal);
        cluster.Routes.Clear();
        foreach (var value in values)
        {
            if (value is not string text)
            {
                Error(entry, $"expected route URLs for \"{entry.Key}\", got {Describe(value)}");
                continue;
            }

            if (!seen.Add(text))
            {
                Warn(entry, $"invalid use of field \"{text}\": Duplicate route entry detected");
                continue;
            }

            if (RouteUrls.TryParse(text, out var url))
            {
                cluster.Routes.Add(url);
            }
            else
            {
                Error(entry, $"error parsing route url [\"{text.Trim()}\"]");
            }
        }
    }
}
