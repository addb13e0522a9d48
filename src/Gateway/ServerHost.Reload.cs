using Courier.Actors.Hosting;
using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Courier.Gateway.Logging;
using Courier.Protocols;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway;

/// <summary>Config reload (SIGHUP, <c>--signal reload</c>), as nats-server's Reload (server/reload.go).</summary>
internal sealed partial class ServerHost
{
    /// <summary>
    /// Re-reads the command line and config file and applies the logging options (<c>debug</c>,
    /// <c>trace</c>, <c>logtime</c>, <c>logfile</c>, <c>logfile_size_limit</c>) and the authorization
    /// (user, password, token, users and their permissions: connected clients are re-checked), and the
    /// limits nats-server reloads. A change to an option nats-server cannot reload refuses the whole
    /// reload with its error, and the server keeps its running configuration. Returns null when
    /// reloaded, else the error to log.
    /// </summary>
    public string? Reload(IReadOnlyList<string> args, NatsLogSink sink)
    {
        lock (_reloadLock) // a signal and a $SYS.REQ.SERVER.<id>.RELOAD request may come at once
        {
            return ReloadCore(args, sink);
        }
    }

    /// <summary>
    /// Reloads with the command line and log sink the process started with (set once the signals are
    /// handled): what <c>$SYS.REQ.SERVER.&lt;id&gt;.RELOAD</c> runs. Null until then.
    /// </summary>
    public Func<string?>? ReloadWithStartArguments { get; set; }

    private readonly Lock _reloadLock = new();

    private string? ReloadCore(IReadOnlyList<string> args, NatsLogSink sink)
    {
        var loaded = ServerConfiguration.Load(args);
        if (loaded.Action != CommandLineAction.Run)
        {
            return loaded.Error ?? "unexpected command line";
        }

        var next = loaded.Options;
        if (Unchangeable(_options, next) is { } refused)
        {
            return refused;
        }

        try
        {
            sink.Reconfigure(next.LogFile, next.Logtime, next.LogSizeLimit);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return $"error opening file: {e.Message}";
        }

        sink.MinLevel = NatsLogSink.LevelFor(next.Debug, next.Trace);
        ReportChange(_options.Trace, next.Trace, "trace");
        ReportChange(_options.Debug, next.Debug, "debug");
        ReportChange(_options.Logtime, next.Logtime, "logtime");
        if (_options.LogFile != next.LogFile)
        {
            ReloadLog.Changed(_log, "log_file", next.LogFile ?? string.Empty);
        }

        if (_options.Username != next.Username)
        {
            ReloadLog.Authorization(_log, "username");
        }

        if (_options.Password != next.Password)
        {
            ReloadLog.Authorization(_log, "password");
        }

        if (_options.Token != next.Token)
        {
            ReloadLog.Authorization(_log, "token");
        }

        if (!_options.Users.Select(u => (u.User, u.Password, Describe(u.Permissions))).SequenceEqual(next.Users.Select(u => (u.User, u.Password, Describe(u.Permissions)))))
        {
            ReloadLog.Authorization(_log, "users");
        }

        if (_options.IdlePoll != next.IdlePoll)
        {
            ReloadLog.Changed(_log, "idle_poll", GoDuration.Format(next.IdlePoll.Ticks * 100));
            IdlePoll.Configure(next.IdlePoll);
            _options.IdlePoll = next.IdlePoll;
        }

        ReloadLimits(next);
        if (next.Tls is { } tls)
        {
            // Loaded afresh from its files on every reload, as nats-server builds a new tls.Config: a rotated
            // certificate under the same file names is taken.
            var changed = _options.Tls is not { } running || running.Certificate.Thumbprint != tls.Certificate.Thumbprint
                || running.Verify != tls.Verify || running.MapCertificateToUser != tls.MapCertificateToUser || running.Timeout != tls.Timeout;
            Broker.ReloadTls(tls); // the broker's options are this host's: _options.Tls is the new block from here
            if (changed)
            {
                ReloadLog.Tls(_log, "enabled");
            }
        }

        Broker.ReloadAuthorization(next);
        _options.Trace = next.Trace;
        _options.Debug = next.Debug;
        _options.Logtime = next.Logtime;
        _options.LogFile = next.LogFile;
        _options.LogSizeLimit = next.LogSizeLimit;
        ReloadLog.Reloaded(_log);
        return null;
    }

    // The limits, as nats-server's options' Apply methods log them (reload.go).
    private void ReloadLimits(ServerOptions next)
    {
        var old = new { _options.MaxPayload, _options.MaxControlLine, _options.MaxConnections, _options.PingInterval, _options.MaxPingsOut, _options.WriteDeadline, _options.AuthTimeout };
        var closed = Broker.ReloadLimits(next); // the broker's options are this host's: they change here
        if (old.AuthTimeout != next.AuthTimeout)
        {
            ReloadLog.Changed(_log, "authorization timeout", next.AuthTimeout.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        if (old.MaxConnections != next.MaxConnections)
        {
            if (closed > 0)
            {
                ReloadLog.ClosedForMaxConnections(_log, closed);
            }

            ReloadLog.Changed(_log, "max_connections", next.MaxConnections.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        if (old.MaxControlLine != next.MaxControlLine)
        {
            ReloadLog.Changed(_log, "max_control_line", next.MaxControlLine.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        if (old.MaxPayload != next.MaxPayload)
        {
            ReloadLog.Changed(_log, "max_payload", next.MaxPayload.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        if (old.PingInterval != next.PingInterval)
        {
            ReloadLog.Changed(_log, "ping_interval", GoDuration.Format(next.PingInterval.Ticks * 100));
        }

        if (old.MaxPingsOut != next.MaxPingsOut)
        {
            ReloadLog.Changed(_log, "ping_max", next.MaxPingsOut.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        if (old.WriteDeadline != next.WriteDeadline)
        {
            ReloadLog.Changed(_log, "write_deadline", GoDuration.Format(next.WriteDeadline.Ticks * 100));
        }
    }

    private static string Describe(Permissions? p) =>
        p is null ? string.Empty : $"{Describe(p.Publish)}|{Describe(p.Subscribe)}";

    private static string Describe(SubjectPermission? p) =>
        p is null ? "-" : $"{string.Join(',', p.Allow ?? [])};{string.Join(',', p.Deny ?? [])}";

    private void ReportChange(bool old, bool now, string name)
    {
        if (old != now)
        {
            ReloadLog.Changed(_log, name, now ? "true" : "false");
        }
    }

    /// <summary>The first option that changed and that this server cannot apply while running, as nats-server words it.</summary>
    private static string? Unchangeable(ServerOptions old, ServerOptions now)
    {
        // nats-server refuses these outright (reload.go diffOptions' default case).
        if (old.Host != now.Host)
        {
            return $"config reload not supported for Host: old={old.Host}, new={now.Host}";
        }

        if (old.Port != now.Port)
        {
            return $"config reload not supported for Port: old={old.Port}, new={now.Port}";
        }

        if (old.ServerName != now.ServerName)
        {
            return $"config reload not supported for ServerName: old={old.ServerName}, new={now.ServerName}";
        }

        if (old.HttpPort != now.HttpPort)
        {
            return $"config reload not supported for HTTPPort: old={old.HttpPort}, new={now.HttpPort}";
        }

        if (old.StoreDir != now.StoreDir)
        {
            return $"config reload not supported for StoreDir: old={old.StoreDir}, new={now.StoreDir}";
        }

        // Leaf node links are made at the start (nats-server refuses a changed leafnodes block too, but for TLS files).
        if (!old.LeafNodes.SameAs(now.LeafNodes))
        {
            return "config reload not supported for LeafNode";
        }

        // Gateway links are made at the start, as nats-server (it refuses a changed gateway block but for TLS files).
        if (!old.Gateway.SameAs(now.Gateway))
        {
            return "config reload not supported for Gateway";
        }

        // nats-server refuses these too (its default case); its message prints both values, which for a key
        // would write the secret into the log, so Courier names the option only.
        if (old.JetStreamKey != now.JetStreamKey)
        {
            return "config reload not supported for JetStreamKey";
        }

        if (old.JetStreamPreviousKey != now.JetStreamPreviousKey)
        {
            return "config reload not supported for JetStreamOldKey";
        }

        if (old.JetStreamCipher != now.JetStreamCipher)
        {
            return $"config reload not supported for JetStreamCipher: old={old.JetStreamCipher}, new={now.JetStreamCipher}";
        }

        // nats-server 2.9.10 does not reload max_pending either (its default case).
        if (old.MaxPending != now.MaxPending)
        {
            return $"config reload not supported for MaxPending: old={old.MaxPending}, new={now.MaxPending}";
        }

        // nats-server can turn client TLS on or off on a reload; Courier reloads the block's certificates and settings
        // only, so it refuses the switch rather than half-apply it (as handshake_first, which decides how a client starts).
        if ((old.Tls is null) != (now.Tls is null))
        {
            return "config reload of tls on or off is not supported by Courier yet (a tls block's certificates and settings reload)";
        }

        if (old.Tls is { } oldTls && now.Tls is { } newTls && oldTls.HandshakeFirst != newTls.HandshakeFirst)
        {
            return "config reload of tls handshake_first is not supported by Courier yet";
        }

        // nats-server can start or stop JetStream on a reload; Courier does not yet, so it refuses rather than half-apply.
        if (old.JetStream != now.JetStream)
        {
            return "config reload of jetstream is not supported by Courier yet";
        }

        return null;
    }

    private static partial class ReloadLog
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Reloaded: {Option} = {Value}")]
        public static partial void Changed(ILogger logger, string option, string value);

        [LoggerMessage(Level = LogLevel.Information, Message = "Reloaded: authorization {What}")]
        public static partial void Authorization(ILogger logger, string what);

        [LoggerMessage(Level = LogLevel.Information, Message = "Reloaded: tls = {State}")]
        public static partial void Tls(ILogger logger, string state);

        [LoggerMessage(Level = LogLevel.Information, Message = "Closed {Count} connections to fall within max_connections")]
        public static partial void ClosedForMaxConnections(ILogger logger, int count);

        [LoggerMessage(Level = LogLevel.Information, Message = "Reloaded server configuration")]
        public static partial void Reloaded(ILogger logger);
    }
}
