using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Configuration;

/// <summary>
/// Flags plus config file into <see cref="ServerOptions"/>, in nats-server's order: parse the
/// flags, load and bind the file named by <c>-c</c>, then apply the flags given explicitly over
/// it, then fill defaults and check the result (nats-server setBaselineOptions, validateOptions).
/// </summary>
internal sealed class ServerConfiguration
{
    /// <summary>nats-server's DEFAULT_PORT, used when the port is 0.</summary>
    public const int DefaultPort = 4222;

    /// <summary>nats-server's DEFAULT_HOST, used when the host is empty.</summary>
    public const string DefaultHost = "0.0.0.0";

    private const int MaxPort = 65535; // highest TCP port

    private static readonly TimeSpan DefaultAuthTimeout = new ServerOptions().AuthTimeout;

    private ServerConfiguration(CommandLineAction action, ServerOptions options, IReadOnlyList<string> warnings, string? error)
    {
        Action = action;
        Options = options;
        Warnings = warnings;
        Error = error;
    }

    /// <summary>Run, show version, show help, or error.</summary>
    public CommandLineAction Action { get; }

    /// <summary>The options to run with; complete only when <see cref="Action"/> is <see cref="CommandLineAction.Run"/>.</summary>
    public ServerOptions Options { get; }

    /// <summary>Lines to log as warnings: unknown or unsupported config keys and flags, deprecated forms.</summary>
    public IReadOnlyList<string> Warnings { get; }

    /// <summary>
    /// For <see cref="CommandLineAction.Error"/>: what to print to stderr before exiting non-zero.
    /// Flag errors are followed by <see cref="CommandLine.Usage"/>; config errors are
    /// <c>file:line:col: reason</c>, one per line.
    /// </summary>
    public string? Error { get; }

    /// <summary>For <see cref="CommandLineAction.SendSignal"/>: the <c>--signal</c> value, <c>command[=pid or pid file]</c>.</summary>
    public string? Signal { get; private init; }

    /// <summary>Builds the options from the process arguments (without the program name). Never throws for bad input.</summary>
    public static ServerConfiguration Load(IReadOnlyList<string> args)
    {
        var options = new ServerOptions();
        var commandLine = CommandLine.Parse(args);
        if (commandLine.Action == CommandLineAction.Error)
        {
            return new(CommandLineAction.Error, options, [], $"{commandLine.Error}\n\n{CommandLine.Usage}");
        }

        if (commandLine.Action != CommandLineAction.Run)
        {
            return new(commandLine.Action, options, commandLine.Warnings, null);
        }

        var flags = commandLine.Flags;
        if (flags.Signal is { } signal)
        {
            // nats-server sends the signal before it reads the config file, then exits.
            return new(CommandLineAction.SendSignal, options, commandLine.Warnings, null) { Signal = signal };
        }

        var warnings = new List<string>(commandLine.Warnings);
        if (flags.ConfigFile is { } file)
        {
            try
            {
                warnings.AddRange(OptionsBinder.Bind(ConfigParser.ParseFile(file), options));
            }
            catch (ConfigException e)
            {
                return new(CommandLineAction.Error, options, warnings, e.Message);
            }
        }

        flags.ApplyTo(options);
        if (flags.ApplyClusterTo(options) is { } clusterError)
        {
            return new(CommandLineAction.Error, options, warnings, clusterError);
        }

        if (flags.TlsOverride(out var disableTls) is { } tls)
        {
            // nats-server's overrideTLS: the flags must name both files.
            if (tls.CertFile is null)
            {
                return new(CommandLineAction.Error, options, warnings, "TLS Server certificate must be present and valid");
            }

            if (tls.KeyFile is null)
            {
                return new(CommandLineAction.Error, options, warnings, "TLS Server private key must be present and valid");
            }

            try
            {
                options.Tls = tls.Load();
            }
            catch (InvalidDataException e)
            {
                return new(CommandLineAction.Error, options, warnings, e.Message);
            }
        }
        else if (disableTls)
        {
            options.Tls = null;
        }

        ApplyDefaults(options);
        return Validate(options) is { } error
            ? new(CommandLineAction.Error, options, warnings, error)
            : new(CommandLineAction.Run, options, warnings, null);
    }

    /// <summary>nats-server's setBaselineOptions for the keys here: port 0 and an empty host mean the defaults.</summary>
    private static void ApplyDefaults(ServerOptions options)
    {
        if (options.Port == 0)
        {
            options.Port = DefaultPort;
        }

        if (string.IsNullOrEmpty(options.Host))
        {
            options.Host = DefaultHost;
        }

        // nats-server's getDefaultAuthTimeout: with TLS the CONNECT deadline is the TLS timeout plus a
        // second. (An authorization timeout written as exactly the 2 s default is taken as the default.)
        if (options.Tls is { } tls && options.AuthTimeout == DefaultAuthTimeout)
        {
            options.AuthTimeout = tls.Timeout + TimeSpan.FromSeconds(1);
        }
    }

    /// <summary>Checks that hold whatever set the values (file or flags); null when all is well.</summary>
    private static string? Validate(ServerOptions options)
    {
        if (options.LameDuckGracePeriod >= options.LameDuckDuration)
        {
            // nats-server's validateOptions, with Go's duration text.
            return $"lame duck grace period ({GoDuration.FormatUptime(options.LameDuckGracePeriod)}) should be strictly lower than lame duck duration ({GoDuration.FormatUptime(options.LameDuckDuration)})";
        }

        if (options.Port is < -1 or > MaxPort)
        {
            return $"port {options.Port} is out of range (0-{MaxPort}, or -1 for a random port)";
        }

        if (options.HttpPort is < -1 or > MaxPort)
        {
            return $"http port {options.HttpPort} is out of range (0-{MaxPort}, or -1 for a random port)";
        }

        if (options.HttpsPort is < -1 or > MaxPort)
        {
            return $"https port {options.HttpsPort} is out of range (0-{MaxPort}, or -1 for a random port)";
        }

        if (options.HttpPort != 0 && options.HttpsPort != 0)
        {
            return $"can't specify both HTTP ({options.HttpPort}) and HTTPs ({options.HttpsPort}) ports";
        }

        if (options.HttpsPort != 0 && options.Tls is null)
        {
            return "TLS cert and key required for HTTPS";
        }

        if (options.MaxPayload > options.MaxPending)
        {
            return $"max_payload ({options.MaxPayload}) cannot be higher than max_pending ({options.MaxPending})";
        }

        if (options.ServerName is { } name && name.Contains(' '))
        {
            return "server name cannot contain spaces";
        }

        if (options.Cluster.Port is < -1 or > MaxPort)
        {
            return $"cluster port {options.Cluster.Port} is out of range (0-{MaxPort}, or -1 for a random port)";
        }

        if (options.Cluster.Name is { } clusterName && clusterName.Contains(' '))
        {
            return "cluster name cannot contain spaces or new lines";
        }

        return options.Mqtt is { } mqtt ? ValidateMqtt(options, mqtt) : null;
    }

    /// <summary>nats-server's validateMQTTOptions, with its error texts.</summary>
    private static string? ValidateMqtt(ServerOptions options, MqttOptions mqtt)
    {
        if (mqtt.Port == 0)
        {
            return null; // no MQTT listener, as nats-server: the other mqtt options do not matter
        }

        if (mqtt.Port is < -1 or > MaxPort)
        {
            return $"mqtt port {mqtt.Port} is out of range (0-{MaxPort}, or -1 for a random port)";
        }

        if (mqtt.NoAuthUser is { } noAuthUser && !options.Users.Exists(u => u.User == noAuthUser))
        {
            return $"no_auth_user: \"{noAuthUser}\" not present as user or nkey in authorization block or account configuration";
        }

        if (options.Users.Count > 0 && mqtt.Username is not null)
        {
            return "mqtt authentication username not compatible with presence of users/nkeys";
        }

        if (options.Users.Count > 0 && mqtt.Token is not null)
        {
            return "mqtt authentication token not compatible with presence of users/nkeys";
        }

        if (mqtt.AckWait < TimeSpan.Zero)
        {
            return "ack wait must be a positive value";
        }

        // Courier has no cluster, gateway or leafnode that could carry the MQTT streams instead.
        return options.JetStream ? null : "mqtt requires JetStream to be enabled if running in standalone mode";
    }
}
