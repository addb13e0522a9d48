using System.Globalization;

namespace Courier.Gateway.Configuration;

/// <summary>
/// nats-server's command line (main.go, server/opts.go ConfigureOptions), parsed the way Go's
/// <c>flag</c> package does: one or two dashes alike (<c>-p</c>, <c>--port</c>, <c>-port</c>);
/// values as <c>-p 4222</c> or <c>-p=4222</c>; bool flags take no value (<c>-js</c>) or an
/// explicit one (<c>-js=false</c>); names are case-sensitive (<c>-DV</c> is one flag, not
/// <c>-D -V</c>); parsing stops at <c>--</c> or the first argument that is not a flag. The first
/// remaining argument may be the command <c>version</c> or <c>help</c>.
/// </summary>
internal static class CommandLine
{
    /// <summary>The help text, nats-server's layout restricted to the flags Courier implements.</summary>
    public const string Usage = """
        Usage: courier [options]

        Server Options:
            -a, --addr, --net <host>         Bind to host address (default: 0.0.0.0)
            -p, --port <port>                Use port for clients (default: 4222, -1 for random)
            -n, --name
                --server_name <server_name>  Server name (default: auto)
            -P, --pid <file>                 File to store PID
            -sl,--signal <signal>[=<pid>]    Send signal to nats-server process (ldm, stop, quit, term, reopen, reload)
                                             <pid> can be either a PID (e.g. 1) or the path to a PID file (e.g. /var/run/nats-server.pid)
            -m, --http_port <port>           Use port for http monitoring
            -ms,--https_port <port>          Use port for https monitoring
            -c, --config <file>              Configuration file
                --ports_file_dir <dir>       Creates a ports file in the specified directory (<executable_name>_<pid>.ports).

        Logging Options:
            -l, --log <file>                 File to redirect log output
            -T, --logtime                    Timestamp log entries (default: true)
                --log_size_limit <bytes>     Rotate the log file past this size
            -D, --debug                      Enable debugging output
            -V, --trace                      Trace the raw protocol
            -DV                              Debug and trace

        JetStream Options:
            -js, --jetstream                 Enable JetStream functionality
            -sd, --store_dir <dir>           Set the storage directory

        Authorization Options:
                --user <user>                User required for connections
                --pass <password>            Password required for connections
                --auth <token>               Authorization token required for connections

        TLS Options:
                --tls                        Enable TLS, do not verify clients (default: false)
                --tlscert <file>             Server certificate file
                --tlskey <file>              Private key for server certificate
                --tlsverify                  Enable TLS, verify client certificates
                --tlscacert <file>           Client certificate CA for verification

        Cluster Options:
                --routes <rurl-1, rurl-2>    Routes to solicit and connect
                --cluster <cluster-url>      Cluster URL for solicited routes
                --cluster_name <string>      Cluster Name, if not set one will be dynamically generated
                --no_advertise <bool>        Do not advertise known cluster information to clients
                --cluster_advertise <string> Cluster URL to advertise to other servers
                --connect_retries <number>   For implicit routes, number of connect retries

        Common Options:
            -h, --help                       Show this message
            -v, --version                    Show version

        """;

    private enum Kind
    {
        Bool,
        Int,
        String,
    }

    /// <summary>How a flag stores its value; <c>help</c> and <c>version</c> use <see cref="State"/>.</summary>
    private sealed record Flag(Kind Kind, Action<State, object> Set);

    private sealed class State
    {
        public CommandLineFlags Flags { get; } = new();

        public bool ShowHelp { get; set; }

        public bool ShowVersion { get; set; }

        public List<string> Warnings { get; } = [];
    }

    // A plain dictionary: it is read a few times per process, and a frozen one's construction (it studies
    // the keys to pick a lookup strategy) cost more at start-up than every lookup it could save.
    private static readonly Dictionary<string, Flag> Flags = BuildFlags();

    /// <summary>Parses <paramref name="args"/> (without the program name). Never throws for bad input.</summary>
    public static CommandLineResult Parse(IReadOnlyList<string> args)
    {
        var state = new State();
        var i = 0;
        while (i < args.Count)
        {
            var arg = args[i];
            if (arg.Length < 2 || arg[0] != '-')
            {
                break;
            }

            var dashes = arg[1] == '-' ? 2 : 1;
            if (arg == "--")
            {
                i++;
                break;
            }

            var name = arg[dashes..];
            if (name.Length == 0 || name[0] is '-' or '=')
            {
                return Failed($"bad flag syntax: {arg}");
            }

            i++;
            string? value = null;
            var eq = name.IndexOf('=');
            if (eq >= 0)
            {
                value = name[(eq + 1)..];
                name = name[..eq];
            }

            if (!Flags.TryGetValue(name, out var flag))
            {
                return Failed($"flag provided but not defined: -{name}");
            }

            object parsed;
            if (flag.Kind == Kind.Bool)
            {
                if (value is null)
                {
                    parsed = true;
                }
                else if (ParseGoBool(value) is { } b)
                {
                    parsed = b;
                }
                else
                {
                    return Failed($"invalid boolean value \"{value}\" for -{name}: parse error");
                }
            }
            else
            {
                if (value is null)
                {
                    if (i >= args.Count)
                    {
                        return Failed($"flag needs an argument: -{name}");
                    }

                    value = args[i++];
                }

                if (flag.Kind == Kind.String)
                {
                    parsed = value;
                }
                else if (int.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var n))
                {
                    parsed = n;
                }
                else
                {
                    return Failed($"invalid value \"{value}\" for flag -{name}: parse error");
                }
            }

            flag.Set(state, parsed);
        }

        if (state.ShowVersion)
        {
            return new CommandLineResult(CommandLineAction.ShowVersion, new CommandLineFlags(), null, state.Warnings);
        }

        if (state.ShowHelp)
        {
            return new CommandLineResult(CommandLineAction.ShowHelp, new CommandLineFlags(), null, state.Warnings);
        }

        if (i < args.Count)
        {
            // nats-server's ProcessCommandLineArgs: only the first non-flag argument counts.
            return args[i].ToLowerInvariant() switch
            {
                "version" => new CommandLineResult(CommandLineAction.ShowVersion, new CommandLineFlags(), null, state.Warnings),
                "help" => new CommandLineResult(CommandLineAction.ShowHelp, new CommandLineFlags(), null, state.Warnings),
                _ => Failed($"unrecognized command: \"{args[i]}\""),
            };
        }

        return new CommandLineResult(CommandLineAction.Run, state.Flags, null, state.Warnings);
    }

    private static CommandLineResult Failed(string error) =>
        new(CommandLineAction.Error, new CommandLineFlags(), error, []);

    /// <summary>Go's strconv.ParseBool.</summary>
    private static bool? ParseGoBool(string value) => value switch
    {
        "1" or "t" or "T" or "true" or "TRUE" or "True" => true,
        "0" or "f" or "F" or "false" or "FALSE" or "False" => false,
        _ => null,
    };

    private static Dictionary<string, Flag> BuildFlags()
    {
        var flags = new Dictionary<string, Flag>(StringComparer.Ordinal);

        void Add(Kind kind, Action<State, object> set, params string[] names)
        {
            foreach (var name in names)
            {
                flags.Add(name, new Flag(kind, set));
            }
        }

        // Flags nats-server has that Courier accepts so scripts keep working, but ignores.
        void Ignored(Kind kind, params string[] names) =>
            Add(kind, (s, _) => s.Warnings.Add($"flag -{names[^1]} is not supported by Courier and is ignored"), names);

        Add(Kind.Bool, (s, v) => s.ShowHelp = (bool)v, "h", "help");
        Add(Kind.Bool, (s, v) => s.ShowVersion = (bool)v, "v", "version");
        Add(Kind.Int, (s, v) => s.Flags.Port = (int)v, "p", "port");
        Add(Kind.String, (s, v) => s.Flags.ServerName = (string)v, "n", "name", "server_name");
        Add(Kind.String, (s, v) => s.Flags.Host = (string)v, "a", "addr", "net");
        Add(Kind.Bool, (s, v) => s.Flags.Debug = (bool)v, "D", "debug");
        Add(Kind.Bool, (s, v) => s.Flags.Trace = (bool)v, "V", "trace", "VV");
        Add(Kind.Bool, (s, v) => s.Flags.Debug = s.Flags.Trace = (bool)v, "DV", "DVV");
        Add(Kind.String, (s, v) => s.Flags.Username = (string)v, "user");
        Add(Kind.String, (s, v) => s.Flags.Password = (string)v, "pass");
        Add(Kind.String, (s, v) => s.Flags.Token = (string)v, "auth");
        Add(Kind.Int, (s, v) => s.Flags.HttpPort = (int)v, "m", "http_port");
        Add(Kind.Int, (s, v) => s.Flags.HttpsPort = (int)v, "ms", "https_port");
        Add(Kind.String, (s, v) => s.Flags.ConfigFile = (string)v, "c", "config");
        Add(Kind.String, (s, v) => s.Flags.PidFile = (string)v, "P", "pid");
        Add(Kind.String, (s, v) => s.Flags.PortsFileDir = (string)v, "ports_file_dir");
        Add(Kind.String, (s, v) => s.Flags.LogFile = (string)v, "l", "log");
        Add(Kind.Bool, (s, v) => s.Flags.JetStream = (bool)v, "js", "jetstream");
        Add(Kind.String, (s, v) => s.Flags.StoreDir = (string)v, "sd", "store_dir");

        Add(Kind.Bool, (s, v) => s.Flags.Tls = (bool)v, "tls");
        Add(Kind.String, (s, v) => s.Flags.TlsCert = (string)v, "tlscert");
        Add(Kind.String, (s, v) => s.Flags.TlsKey = (string)v, "tlskey");
        Add(Kind.String, (s, v) => s.Flags.TlsCaCert = (string)v, "tlscacert");
        Add(Kind.Bool, (s, v) => s.Flags.TlsVerify = (bool)v, "tlsverify");

        Add(Kind.String, (s, v) => s.Flags.ClusterListen = (string)v, "cluster", "cluster_listen");
        Add(Kind.String, (s, v) => s.Flags.Routes = (string)v, "routes");
        Add(Kind.String, (s, v) => s.Flags.ClusterName = (string)v, "cluster_name");
        Add(Kind.Bool, (s, v) => s.Flags.NoAdvertise = (bool)v, "no_advertise");
        Add(Kind.Int, (s, v) => s.Flags.ConnectRetries = (int)v, "connect_retries");
        Add(Kind.String, (s, v) => s.Flags.ClusterAdvertise = (string)v, "cluster_advertise");

        Add(Kind.Bool, (s, v) => s.Flags.Logtime = (bool)v, "T", "logtime");
        Add(Kind.Int, (s, v) => s.Flags.LogSizeLimit = (int)v, "log_size_limit");
        Add(Kind.String, (s, v) => s.Flags.Signal = (string)v, "sl", "signal");
        Ignored(Kind.Bool, "logtime_utc");
        Ignored(Kind.Bool, "s", "syslog");
        Ignored(Kind.String, "r", "remote_syslog");
        Ignored(Kind.Int, "max_traced_msg_len");
        Ignored(Kind.String, "client_advertise");
        return flags;
    }
}
