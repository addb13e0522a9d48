using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary>
/// The options given explicitly on the command line; null means "not given". Applied after the
/// config file so that flags win, as nats-server re-parses its flags over the file's values.
/// </summary>
internal sealed class CommandLineFlags
{
    /// <summary><c>-a</c>, <c>--addr</c>, <c>--net</c>.</summary>
    public string? Host { get; set; }

    /// <summary><c>-p</c>, <c>--port</c>; -1 picks a random port.</summary>
    public int? Port { get; set; }

    /// <summary><c>-n</c>, <c>--name</c>, <c>--server_name</c>.</summary>
    public string? ServerName { get; set; }

    /// <summary><c>-m</c>, <c>--http_port</c>.</summary>
    public int? HttpPort { get; set; }

    /// <summary><c>-ms</c>, <c>--https_port</c>.</summary>
    public int? HttpsPort { get; set; }

    /// <summary><c>-c</c>, <c>--config</c>.</summary>
    public string? ConfigFile { get; set; }

    /// <summary><c>-js</c>, <c>--jetstream</c>.</summary>
    public bool? JetStream { get; set; }

    /// <summary><c>-sd</c>, <c>--store_dir</c>.</summary>
    public string? StoreDir { get; set; }

    /// <summary><c>--user</c>.</summary>
    public string? Username { get; set; }

    /// <summary><c>--pass</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>--auth</c>: the token.</summary>
    public string? Token { get; set; }

    /// <summary><c>-D</c>, <c>--debug</c>, <c>-DV</c>, <c>-DVV</c>.</summary>
    public bool? Debug { get; set; }

    /// <summary><c>-V</c>, <c>--trace</c>, <c>-DV</c>, <c>-VV</c>, <c>-DVV</c>.</summary>
    public bool? Trace { get; set; }

    /// <summary><c>-l</c>, <c>--log</c>.</summary>
    public string? LogFile { get; set; }

    /// <summary><c>-P</c>, <c>--pid</c>.</summary>
    public string? PidFile { get; set; }

    /// <summary><c>-T</c>, <c>--logtime</c>.</summary>
    public bool? Logtime { get; set; }

    /// <summary><c>--log_size_limit</c>, bytes.</summary>
    public long? LogSizeLimit { get; set; }

    /// <summary><c>-sl</c>, <c>--signal</c>: <c>command[=pid]</c> to send to a running server.</summary>
    public string? Signal { get; set; }

    /// <summary><c>--ports_file_dir</c>.</summary>
    public string? PortsFileDir { get; set; }

    /// <summary><c>--tls</c>: true enables TLS from the flags, false disables it (even the file's).</summary>
    public bool? Tls { get; set; }

    /// <summary><c>--tlscert</c>: the server certificate (PEM).</summary>
    public string? TlsCert { get; set; }

    /// <summary><c>--tlskey</c>: the server private key (PEM).</summary>
    public string? TlsKey { get; set; }

    /// <summary><c>--tlscacert</c>: the CA bundle client certificates are verified against.</summary>
    public string? TlsCaCert { get; set; }

    /// <summary><c>--tlsverify</c>: require and verify client certificates.</summary>
    public bool? TlsVerify { get; set; }

    /// <summary><c>--cluster</c>, <c>--cluster_listen</c>: the route listen URL (<c>nats://[user:pass@]host:port</c>); empty turns clustering off.</summary>
    public string? ClusterListen { get; set; }

    /// <summary><c>--routes</c>: comma-separated route URLs; empty clears the file's routes.</summary>
    public string? Routes { get; set; }

    /// <summary><c>--cluster_name</c>.</summary>
    public string? ClusterName { get; set; }

    /// <summary><c>--no_advertise</c>.</summary>
    public bool? NoAdvertise { get; set; }

    /// <summary><c>--connect_retries</c>.</summary>
    public int? ConnectRetries { get; set; }

    /// <summary><c>--cluster_advertise</c>.</summary>
    public string? ClusterAdvertise { get; set; }

    /// <summary>
    /// As nats-server's ConfigureOptions: <c>--tls=false</c> turns TLS off; otherwise any <c>--tls*</c> flag
    /// replaces the file's <c>tls { }</c> with one built from the flags alone. Null when the flags say nothing.
    /// </summary>
    public TlsSettings? TlsOverride(out bool disable)
    {
        disable = Tls == false;
        if (disable || (Tls is null && TlsCert is null && TlsKey is null && TlsCaCert is null && TlsVerify is null))
        {
            return null;
        }

        return new TlsSettings { CertFile = TlsCert, KeyFile = TlsKey, CaFile = TlsCaCert, Verify = TlsVerify ?? false };
    }

    /// <summary>Copies every flag that was given onto <paramref name="options"/>.</summary>
    public void ApplyTo(ServerOptions options)
    {
        if (Host is not null)
        {
            options.Host = Host;
        }

        if (Port is { } port)
        {
            options.Port = port;
        }

        if (ServerName is not null)
        {
            options.ServerName = ServerName;
        }

        if (HttpPort is { } httpPort)
        {
            options.HttpPort = httpPort;
        }

        if (HttpsPort is { } httpsPort)
        {
            options.HttpsPort = httpsPort;
        }

        if (ConfigFile is not null)
        {
            options.ConfigFile = ConfigFile;
        }

        if (JetStream is { } jetStream)
        {
            options.JetStream = jetStream;
        }

        if (StoreDir is not null)
        {
            options.StoreDir = StoreDir;
        }

        if (Username is not null)
        {
            options.Username = Username;
        }

        if (Password is not null)
        {
            options.Password = Password;
        }

        if (Token is not null)
        {
            options.Token = Token;
        }

        if (Debug is { } debug)
        {
            options.Debug = debug;
        }

        if (Trace is { } trace)
        {
            options.Trace = trace;
        }

        if (LogFile is not null)
        {
            options.LogFile = LogFile;
        }

        if (PidFile is not null)
        {
            options.PidFile = PidFile;
        }

        if (Logtime is { } logtime)
        {
            options.Logtime = logtime;
        }

        if (LogSizeLimit is { } limit)
        {
            options.LogSizeLimit = limit;
        }

        if (PortsFileDir is not null)
        {
            options.PortsFileDir = PortsFileDir;
        }
    }

    /// <summary>
    /// Copies the cluster flags onto <paramref name="options"/> as nats-server's overrideCluster and
    /// mergeRoutes do; returns nats-server's error text when one is malformed, else null.
    /// </summary>
    public string? ApplyClusterTo(ServerOptions options)
    {
        var cluster = options.Cluster;
        if (ClusterName is not null)
        {
            cluster.Name = ClusterName;
        }

        if (NoAdvertise is { } noAdvertise)
        {
            cluster.NoAdvertise = noAdvertise;
        }

        if (ConnectRetries is { } retries)
        {
            cluster.ConnectRetries = retries;
        }

        if (ClusterAdvertise is not null)
        {
            cluster.Advertise = ClusterAdvertise;
        }

        if (ClusterListen is { } listen && OverrideClusterListen(cluster, listen) is { } error)
        {
            return error;
        }

        if (Routes is { } routes)
        {
            var urls = RouteUrls.FromFlag(routes, out var routeError);
            if (urls is null)
            {
                return routeError;
            }

            cluster.Routes.Clear();
            cluster.Routes.AddRange(urls);
            if (urls.Count > 0 && ClusterListen is null && !cluster.Enabled)
            {
                return "solicited routes require cluster capabilities, e.g. --cluster";
            }
        }

        return null;
    }

    /// <summary>nats-server's overrideCluster: host, port (-1 random) and optional user:password from the URL.</summary>
    private static string? OverrideClusterListen(ClusterOptions cluster, string listen)
    {
        if (listen.Length == 0)
        {
            cluster.Port = 0; // enough to turn clustering off, as nats-server
            return null;
        }

        var random = listen.EndsWith(":-1", StringComparison.Ordinal);
        var text = random ? listen[..^3] + ":0" : listen;
        if (!Uri.TryCreate(text, UriKind.Absolute, out var url) || url.Host.Length == 0 || url.Port < 0)
        {
            return $"parse \"{listen}\": invalid cluster URL";
        }

        cluster.Host = url.Host.Trim('[', ']');
        cluster.Port = random ? -1 : url.Port;
        if (url.UserInfo.Length == 0)
        {
            // Credentials come only from the URL once the flag is given, as nats-server.
            cluster.Username = null;
            cluster.Password = null;
            return null;
        }

        var colon = url.UserInfo.IndexOf(':');
        if (colon < 0)
        {
            return "expected cluster password to be set";
        }

        cluster.Username = Uri.UnescapeDataString(url.UserInfo[..colon]);
        cluster.Password = Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]);
        return null;
    }
}
