using System.Globalization;
using Courier.Actors.Server;
using Courier.Protocols;
using Courier.Storage;

namespace Courier.Gateway.Configuration;

/// <summary>
/// Maps a parsed config tree onto <see cref="ServerOptions"/>, key by key as nats-server's
/// <c>processConfigFileLine</c> (server/opts.go): same key names and aliases, same value forms.
/// </summary>
/// <remarks>
/// An unknown key is nats-server's error <c>file:line:col: unknown field "foo"</c>; a key nats-server
/// knows but Courier does not implement is an error when it concerns security or durability and a
/// "not supported" warning otherwise (<see cref="UnimplementedKeys"/>); keys only used as
/// <c>$variables</c> are silent.
/// Wrong value types and invalid values are errors, all collected and thrown together.
/// </remarks>
internal sealed partial class OptionsBinder
{
    /// <summary>Top-level nats-server keys Courier does not implement (README.md has the table).</summary>
    private static readonly UnimplementedKeys UnimplementedTopLevel = new(
        warned:
        [
            "client_advertise", "trace_headers", "logtime_utc", "mappings", "maps", "disable_sublist_cache",
            "no_sublist_cache", "https", "http_base_path", "logfile_max_num",
            "log_max_num", "syslog", "remote_syslog", "prof_port", "prof_block_rate", "proxy_protocol",
            "max_traced_msg_len", "max_sub_tokens", "max_subscription_tokens", "write_timeout",
            "no_header_support", "connect_error_reports", "reconnect_error_reports",
            "server_metadata", "feature_flags", "default_js_domain", "no_fast_producer_stall", "max_closed_clients",
        ],
        refused:
        [
            "ocsp", "ocsp_cache", "allow_non_tls", "trusted", "trusted_keys", "resolver_tls",
            "resolver_pinned_accounts", "default_sentinel", "proxies",
        ]);

    /// <summary><c>jetstream { }</c> keys Courier does not implement: a TPM-held encryption key is refused
    /// (a user who asked for encryption must not get plaintext).</summary>
    private static readonly UnimplementedKeys UnimplementedJetStream = new(
        warned:
        [
            "strict", "extension_hint", "limits", "unique_tag", "max_outstanding_catchup", "max_buffered_size",
            "max_buffered_msgs", "request_queue_limit", "info_queue_limit", "meta_compact", "meta_compact_size",
            "meta_compact_sync", "max_concurrent_io",
        ],
        refused: ["tpm"]);

    private const int MaxPort = 65535; // highest TCP port

    private readonly ServerOptions _options;
    private readonly List<string> _warnings = [];
    private readonly List<ConfigException> _errors = [];
    private bool _storeDirSet;
    private ConfigEntry? _webSocketEntry;
    private ConfigEntry? _gatewayEntry;

    private OptionsBinder(ServerOptions options) => _options = options;

    /// <summary>
    /// Applies every key of <paramref name="config"/> to <paramref name="options"/> and returns
    /// the warnings (<c>file:line:col: text</c>) for the caller to log.
    /// </summary>
    /// <exception cref="ConfigException">One or more keys have a wrong type or an invalid value; lists them all.</exception>
    public static IReadOnlyList<string> Bind(ConfigMap config, ServerOptions options)
    {
        var binder = new OptionsBinder(options);
        if (config.Count == 0)
        {
            binder._warnings.Add("config has no values or is empty");
        }

        foreach (var entry in config.Entries)
        {
            binder.BindTopLevel(entry);
        }

        binder.ValidateWebSocket();
        binder.ValidateOperator();
        binder.ValidateAccounts();
        binder.ValidateGateway();

        return binder._errors.Count > 0 ? throw new ConfigException(binder._errors) : binder._warnings;
    }

    private void BindTopLevel(ConfigEntry entry)
    {
        switch (entry.Key.ToLowerInvariant())
        {
            case "listen":
                if (TryHostPort(entry, out var host, out var port))
                {
                    _options.Host = host ?? _options.Host;
                    _options.Port = port;
                }

                break;
            case "port":
                if (TryPort(entry, out port))
                {
                    _options.Port = port;
                }

                break;
            case "host" or "net":
                if (TryString(entry, out var s))
                {
                    _options.Host = s;
                }

                break;
            case "server_tags":
                // nats-server: a string or an array of strings (jwt.TagList, lowercased and trimmed).
                foreach (var tag in entry.Value switch { string one => [one], List<object?> list => list, _ => [entry.Value] })
                {
                    if (tag is string t)
                    {
                        var normalized = t.Trim().ToLowerInvariant();
                        if (normalized.Length > 0 && !_options.Tags.Contains(normalized))
                        {
                            _options.Tags.Add(normalized);
                        }
                    }
                    else
                    {
                        Error(entry, $"error parsing tags: unsupported type {Describe(tag)}");
                        break;
                    }
                }

                break;
            case "server_name":
                if (TryString(entry, out s))
                {
                    if (s.Contains(' '))
                    {
                        Error(entry, "server name cannot contain spaces");
                    }
                    else
                    {
                        _options.ServerName = s;
                    }
                }

                break;
            case "http":
                if (TryHostPort(entry, out host, out port))
                {
                    _options.HttpHost = host;
                    _options.HttpPort = port;
                }

                break;
            case "http_port" or "monitor_port":
                if (TryPort(entry, out port))
                {
                    _options.HttpPort = port;
                }

                break;
            case "https_port":
                if (TryPort(entry, out port))
                {
                    _options.HttpsPort = port;
                }

                break;
            case "tls":
                BindTls(entry);
                break;
            case "debug":
                if (TryBool(entry, out var b))
                {
                    _options.Debug = b;
                }

                break;
            case "trace" or "trace_verbose":
                if (TryBool(entry, out b))
                {
                    _options.Trace = b;
                }

                break;
            case "logfile" or "log_file":
                if (TryString(entry, out s))
                {
                    _options.LogFile = s;
                }

                break;
            case "pidfile" or "pid_file":
                if (TryString(entry, out s))
                {
                    _options.PidFile = s;
                }

                break;
            case "ports_file_dir":
                if (TryString(entry, out s))
                {
                    _options.PortsFileDir = s;
                }

                break;
            case "max_control_line":
                if (TrySize(entry, out var size) && TryInt32(entry, size, out var i))
                {
                    _options.MaxControlLine = i;
                }

                break;
            case "max_payload":
                if (TrySize(entry, out size) && TryInt32(entry, size, out i))
                {
                    _options.MaxPayload = i;
                }

                break;
            case "max_pending":
                if (TrySize(entry, out size))
                {
                    _options.MaxPending = size;
                }

                break;
            case "max_connections" or "max_conn":
                if (TryInt(entry, out i))
                {
                    // nats-server: 0 in the file means no client connections at all, kept as -1.
                    _options.MaxConnections = i == 0 ? -1 : i;
                }

                break;
            case "max_subscriptions" or "max_subs":
                if (TryInt(entry, out i))
                {
                    _options.MaxSubscriptions = i;
                }

                break;
            case "ping_interval":
                if (TryDuration(entry, out var duration))
                {
                    _options.PingInterval = duration;
                }

                break;
            case "ping_max":
                if (TryInt(entry, out i))
                {
                    _options.MaxPingsOut = i;
                }

                break;
            case "write_deadline":
                if (TryDuration(entry, out duration))
                {
                    _options.WriteDeadline = duration;
                }

                break;
            case "store_dir" or "storedir":
                if (TryString(entry, out s))
                {
                    SetStoreDir(entry, s);
                }

                break;
            case "jetstream":
                BindJetStream(entry);
                break;
            case "authorization":
                _options.AuthorizationBlock = true;
                BindAuthorization(entry);
                break;
            case "operator" or "operators" or "roots" or "root" or "root_operators" or "root_operator":
                BindOperator(entry);
                break;
            case "resolver" or "account_resolver" or "accounts_resolver":
                BindResolver(entry);
                break;
            case "resolver_preload":
                BindResolverPreload(entry);
                break;
            case "system_account" or "system":
                BindSystemAccount(entry);
                break;
            case "no_system_account" or "no_system" or "no_sys_acc":
                if (TryBool(entry, out var noSystem))
                {
                    _options.NoSystemAccount = noSystem;
                }

                break;
            case "accounts":
                BindAccounts(entry);
                break;
            case "no_auth_user":
                if (TryString(entry, out s))
                {
                    _noAuthUserEntry = entry;
                    _options.NoAuthUser = s;
                }

                break;
            case "websocket" or "ws":
                BindWebSocket(entry);
                break;
            case "mqtt":
                BindMqtt(entry);
                break;
            case "cluster":
                BindCluster(entry);
                break;
            case "leafnodes" or "leaf":
                BindLeafNodes(entry);
                break;
            case "gateway":
                BindGateway(entry);
                break;
            case "nats_server_version":
                if (TryString(entry, out s))
                {
                    if (s.Length == 0)
                    {
                        Error(entry, "nats_server_version cannot be empty");
                    }
                    else
                    {
                        _options.NatsServerVersion = s;
                    }
                }

                break;
            default:
                if (!BindOperations(entry))
                {
                    Unknown(entry, UnimplementedTopLevel);
                }

                break;
        }
    }

    /// <summary>
    /// <c>jetstream</c>: a bool, the strings <c>enabled</c>/<c>disabled</c> (also <c>enable</c>/<c>disable</c>),
    /// or a block (which enables JetStream unless it says <c>enabled: false</c>).
    /// </summary>
    private void BindJetStream(ConfigEntry entry)
    {
        switch (entry.Value)
        {
            case bool b:
                _options.JetStream = b;
                return;
            case string s when s.Equals("enabled", StringComparison.OrdinalIgnoreCase) || s.Equals("enable", StringComparison.OrdinalIgnoreCase):
                _options.JetStream = true;
                return;
            case string s when s.Equals("disabled", StringComparison.OrdinalIgnoreCase) || s.Equals("disable", StringComparison.OrdinalIgnoreCase):
                _options.JetStream = false;
                return;
            case string s:
                Error(entry, $"Expected 'enabled' or 'disabled' for string value, got '{s}'");
                return;
            case ConfigMap block:
                var enable = true;
                foreach (var e in block.Entries)
                {
                    switch (e.Key.ToLowerInvariant())
                    {
                        case "store" or "store_dir" or "storedir":
                            if (TryString(e, out var dir))
                            {
                                SetStoreDir(e, dir);
                            }

                            break;
                        case "max_memory_store" or "max_mem_store" or "max_mem":
                            if (TryStorageSize(e, out var size))
                            {
                                _options.MaxMemoryStore = size;
                            }

                            break;
                        case "max_file_store" or "max_file":
                            if (TryStorageSize(e, out size))
                            {
                                _options.MaxFileStore = size;
                            }

                            break;
                        case "domain":
                            if (TryString(e, out var domain))
                            {
                                if (domain.Length > 0 && domain.IndexOfAny(['.', '*', '>', ' ', '\t']) >= 0)
                                {
                                    Error(e, "invalid domain name: may not contain ., * or >");
                                }
                                else
                                {
                                    _options.JetStreamDomain = domain.Length == 0 ? null : domain;
                                }
                            }

                            break;
                        case "sync" or "sync_interval":
                            if (TrySyncPolicy(e, out var sync))
                            {
                                _options.JetStreamSync = sync;
                            }

                            break;
                        case "key" or "ek" or "encryption_key":
                            if (TryString(e, out var key))
                            {
                                _options.JetStreamKey = key.Length == 0 ? null : key;
                            }

                            break;
                        case "prev_key" or "prev_ek" or "prev_encryption_key":
                            if (TryString(e, out var previous))
                            {
                                _options.JetStreamPreviousKey = previous.Length == 0 ? null : previous;
                            }

                            break;
                        case "cipher":
                            if (TryString(e, out var cipher))
                            {
                                // nats-server's setJetStreamEkCipher, with its error text.
                                switch (cipher.ToLowerInvariant())
                                {
                                    case "chacha" or "chachapoly":
                                        _options.JetStreamCipher = StoreCipher.ChaCha;
                                        break;
                                    case "aes":
                                        _options.JetStreamCipher = StoreCipher.Aes;
                                        break;
                                    default:
                                        Error(e, $"Unknown cipher type: \"{cipher}\"");
                                        break;
                                }
                            }

                            break;
                        case "enable" or "enabled":
                            if (TryBool(e, out var b))
                            {
                                enable = b;
                            }

                            break;
                        default:
                            Unknown(e, UnimplementedJetStream);
                            break;
                    }
                }

                if (_options.JetStreamKey is not null && !CipherSupported(_options.JetStreamCipher))
                {
                    // .NET's ChaCha20-Poly1305 and AES-GCM need the OS crypto library's support (OpenSSL 1.1+ on Linux).
                    Error(entry, $"Cipher type \"{(_options.JetStreamCipher == StoreCipher.Aes ? "aes" : "chachapoly")}\" is not supported on this platform");
                }

                _options.JetStream = enable;
                return;
            default:
                Error(entry, $"expected a bool, 'enabled', 'disabled' or a block for \"jetstream\", got {Describe(entry.Value)}");
                return;
        }
    }

    private static bool CipherSupported(StoreCipher cipher) =>
        cipher == StoreCipher.Aes ? System.Security.Cryptography.AesGcm.IsSupported : System.Security.Cryptography.ChaCha20Poly1305.IsSupported;

    private void SetStoreDir(ConfigEntry entry, string dir)
    {
        // nats-server refuses store_dir both at the top level and inside jetstream { }.
        if (_storeDirSet)
        {
            Error(entry, "Duplicate 'store_dir' configuration");
            return;
        }

        _storeDirSet = true;
        _options.StoreDir = dir;
    }

    /// <summary>A port number, or <c>"host:port"</c> (IPv6 hosts in brackets), as nats-server's parseListen.</summary>
    private bool TryHostPort(ConfigEntry entry, out string? host, out int port)
    {
        host = null;
        port = 0;
        switch (entry.Value)
        {
            case long:
                return TryPort(entry, out port);
            case string s:
                var colon = s.LastIndexOf(':');
                var h = colon < 0 ? null : s[..colon];
                if (h is ['[', .., ']'])
                {
                    h = h[1..^1];
                }
                else if (h is not null && (h.Contains(':') || h.Contains('[') || h.Contains(']')))
                {
                    h = null;
                }

                if (h is null)
                {
                    Error(entry, $"could not parse address string \"{s}\"");
                    return false;
                }

                if (!int.TryParse(s.AsSpan(colon + 1), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out port)
                    || port < -1 || port > MaxPort)
                {
                    Error(entry, $"could not parse port \"{s[(colon + 1)..]}\"");
                    return false;
                }

                host = h.Length == 0 ? null : h;
                return true;
            default:
                Error(entry, $"expected port or host:port for \"{entry.Key}\", got {Describe(entry.Value)}");
                return false;
        }
    }

    /// <summary>A port: 0-65535, or -1 for a random free port.</summary>
    private bool TryPort(ConfigEntry entry, out int port)
    {
        port = 0;
        if (!TryLong(entry, out var value))
        {
            return false;
        }

        if (value < -1 || value > MaxPort)
        {
            Error(entry, $"\"{entry.Key}\" {value} is not a port (0-{MaxPort}, or -1 for a random port)");
            return false;
        }

        port = (int)value;
        return true;
    }

    private bool TryInt(ConfigEntry entry, out int value)
    {
        value = 0;
        return TryLong(entry, out var l) && TryInt32(entry, l, out value);
    }

    private bool TryInt32(ConfigEntry entry, long value, out int result)
    {
        result = 0;
        if (value is > int.MaxValue or < int.MinValue)
        {
            Error(entry, $"{entry.Key} value is too big");
            return false;
        }

        result = (int)value;
        return true;
    }

    private bool TryLong(ConfigEntry entry, out long value)
    {
        if (entry.Value is long l)
        {
            value = l;
            return true;
        }

        value = 0;
        Error(entry, $"expected an integer for \"{entry.Key}\", got {Describe(entry.Value)}");
        return false;
    }

    /// <summary>An integer (suffixes already applied by the parser) or a string with the same suffixes, e.g. <c>"1MB"</c>.</summary>
    private bool TrySize(ConfigEntry entry, out long value)
    {
        value = 0;
        switch (entry.Value)
        {
            case long l:
                value = l;
                return true;
            case string s:
                if (ByteSize.TryParse(s, out value, out var error))
                {
                    return true;
                }

                Error(entry, $"\"{entry.Key}\": {error}");
                return false;
            default:
                Error(entry, $"expected a size for \"{entry.Key}\", got {Describe(entry.Value)}");
                return false;
        }
    }

    /// <summary>JetStream sizes: an integer, or a string ending in K, M, G or T (binary), as nats-server's getStorageSize.</summary>
    private bool TryStorageSize(ConfigEntry entry, out long value)
    {
        value = 0;
        switch (entry.Value)
        {
            case long l:
                value = l;
                return true;
            case string s:
                if (ByteSize.TryParseStorageSize(s, out value, out var error))
                {
                    return true;
                }

                Error(entry, $"{entry.Key} {error}");
                return false;
            default:
                Error(entry, $"{entry.Key} must be an integer or a string");
                return false;
        }
    }

    /// <summary>
    /// A Go duration string (<c>"2m"</c>, <c>"1h30m"</c>), or an integer of seconds with a warning,
    /// as nats-server's parseDuration.
    /// </summary>
    private bool TryDuration(ConfigEntry entry, out TimeSpan value)
    {
        value = TimeSpan.Zero;
        switch (entry.Value)
        {
            case string s:
                if (GoDuration.TryParse(s, out value, out var error))
                {
                    return true;
                }

                Error(entry, $"error parsing {entry.Key}: {error}");
                return false;
            case long seconds:
                Warn(entry, $"invalid use of field \"{entry.Key}\": {entry.Key} should be converted to a duration");
                if (seconds > TimeSpan.MaxValue.TotalSeconds || seconds < TimeSpan.MinValue.TotalSeconds)
                {
                    Error(entry, $"{entry.Key} value is too big");
                    return false;
                }

                value = TimeSpan.FromSeconds(seconds);
                return true;
            default:
                Error(entry, $"expected a duration for \"{entry.Key}\" (e.g. \"2m\"), got {Describe(entry.Value)}");
                return false;
        }
    }

    /// <summary>
    /// <c>sync_interval</c>: the string <c>always</c> (any case), or a duration as <see cref="TryDuration"/>
    /// (nats-server's parseJetStream). Zero means the default, as in nats-server, where the default is
    /// 2 minutes and in Courier <c>always</c>. A negative duration is an error (nats-server would arm a
    /// timer that fires at once, over and over).
    /// </summary>
    private bool TrySyncPolicy(ConfigEntry entry, out SyncPolicy policy)
    {
        policy = SyncPolicy.Always;
        if (entry.Value is string s && s.Equals("always", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        if (!TryDuration(entry, out var period))
        {
            return false;
        }

        if (period < TimeSpan.Zero)
        {
            Error(entry, $"{entry.Key} must be \"always\" or a duration of zero or more, got {entry.Value}");
            return false;
        }

        if (period > TimeSpan.Zero)
        {
            policy = SyncPolicy.Interval(period);
        }

        return true;
    }

    private bool TryString(ConfigEntry entry, out string value)
    {
        if (entry.Value is string s)
        {
            value = s;
            return true;
        }

        value = "";
        Error(entry, $"expected a string for \"{entry.Key}\", got {Describe(entry.Value)}");
        return false;
    }

    private bool TryBool(ConfigEntry entry, out bool value)
    {
        if (entry.Value is bool b)
        {
            value = b;
            return true;
        }

        value = false;
        Error(entry, $"expected a bool for \"{entry.Key}\", got {Describe(entry.Value)}");
        return false;
    }

    /// <summary>
    /// A key this binder does not bind, unless it only defines a variable: warned or refused as
    /// <paramref name="unimplemented"/> says, else nats-server's <c>unknown field "x"</c> error
    /// (its unknownConfigFieldErr, which every block parser of nats-server 2.9.10 reports).
    /// </summary>
    private void Unknown(ConfigEntry entry, UnimplementedKeys unimplemented)
    {
        if (entry.IsUsedAsVariable)
        {
            return;
        }

        if (unimplemented.IsWarned(entry.Key))
        {
            Warn(entry, $"field \"{entry.Key}\" is not supported by Courier and is ignored");
        }
        else if (unimplemented.IsRefused(entry.Key))
        {
            Error(entry, UnimplementedKeys.RefusedReason(entry.Key));
        }
        else
        {
            Error(entry, $"unknown field \"{entry.Key}\"");
        }
    }

    /// <summary>A key in a block whose other keys nats-server does not look at (it starts all the same): a warning.</summary>
    private void Ignored(ConfigEntry entry)
    {
        if (!entry.IsUsedAsVariable)
        {
            Warn(entry, $"field \"{entry.Key}\" is ignored");
        }
    }

    private void Warn(ConfigEntry entry, string text) => _warnings.Add($"{entry.Position}: {text}");

    private void Error(ConfigEntry entry, string reason) => _errors.Add(new ConfigException(entry.Position, reason));

    /// <summary>A value's type and text for messages: <c>string "abc"</c>, <c>integer 5</c>, <c>block</c>.</summary>
    private static string Describe(object? value) => value switch
    {
        null => "nothing",
        string s => $"string \"{s}\"",
        long l => $"integer {l}",
        double d => $"float {d.ToString(CultureInfo.InvariantCulture)}",
        bool b => $"bool {(b ? "true" : "false")}",
        DateTime t => $"date {t:yyyy-MM-ddTHH:mm:ssZ}",
        ConfigMap => "a block { }",
        List<object?> => "an array [ ]",
        _ => value.GetType().Name,
    };
}
