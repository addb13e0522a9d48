using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Courier.Storage;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class OptionsBinderTests
{
    private static (ServerOptions Options, IReadOnlyList<string> Warnings) Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return (options, warnings);
    }

    private static ConfigException BindFails(string text) =>
        Assert.Throws<ConfigException>(() => Bind(text));

    [Fact]
    public void An_empty_file_keeps_nats_server_defaults_and_warns()
    {
        var (options, warnings) = Bind("");

        Assert.Equal("0.0.0.0", options.Host);
        Assert.Equal(4222, options.Port);
        Assert.Equal(1024 * 1024, options.MaxPayload);
        Assert.Equal(TimeSpan.FromMinutes(2), options.PingInterval);
        Assert.Contains("config has no values or is empty", Assert.Single(warnings));
    }

    [Fact]
    public void Top_level_keys_bind_to_their_options()
    {
        var (options, warnings) = Bind("""
            host: 127.0.0.1
            port: 4333
            server_name: courier-a
            http_port: 8222
            max_payload: 2MB
            max_control_line: 8kb
            max_pending: 128MB
            max_connections: 100
            max_subscriptions: 50
            ping_interval: "30s"
            ping_max: 5
            write_deadline: "5s"
            debug: true
            trace: yes
            logfile: /var/log/courier.log
            pidfile: /var/run/courier.pid
            ports_file_dir: /tmp/ports
            nats_server_version: "2.11.0"
            """);

        Assert.Empty(warnings);
        Assert.Equal("127.0.0.1", options.Host);
        Assert.Equal(4333, options.Port);
        Assert.Equal("courier-a", options.ServerName);
        Assert.Equal(8222, options.HttpPort);
        Assert.Equal(2 * 1024 * 1024, options.MaxPayload);
        Assert.Equal(8 * 1024, options.MaxControlLine);
        Assert.Equal(128L * 1024 * 1024, options.MaxPending);
        Assert.Equal(100, options.MaxConnections);
        Assert.Equal(50, options.MaxSubscriptions);
        Assert.Equal(TimeSpan.FromSeconds(30), options.PingInterval);
        Assert.Equal(5, options.MaxPingsOut);
        Assert.Equal(TimeSpan.FromSeconds(5), options.WriteDeadline);
        Assert.True(options.Debug);
        Assert.True(options.Trace);
        Assert.Equal("/var/log/courier.log", options.LogFile);
        Assert.Equal("/var/run/courier.pid", options.PidFile);
        Assert.Equal("/tmp/ports", options.PortsFileDir);
        Assert.Equal("2.11.0", options.NatsServerVersion);
    }

    [Theory]
    [InlineData("net: 10.0.0.1")]
    [InlineData("host: 10.0.0.1")]
    public void Net_is_an_alias_of_host(string text)
    {
        Assert.Equal("10.0.0.1", Bind(text).Options.Host);
    }

    [Theory]
    [InlineData("max_conn: 7", 7)]
    [InlineData("max_connections: 7", 7)]
    [InlineData("max_connections: 0", -1)]
    public void Max_connections_has_an_alias_and_zero_refuses_all_clients(string text, int expected)
    {
        Assert.Equal(expected, Bind(text).Options.MaxConnections);
    }

    [Fact]
    public void Aliases_bind_like_their_main_names()
    {
        var (options, warnings) = Bind("max_subs: 9\nlog_file: a.log\npid_file: a.pid\nmonitor_port: 8333");

        Assert.Empty(warnings);
        Assert.Equal(9, options.MaxSubscriptions);
        Assert.Equal("a.log", options.LogFile);
        Assert.Equal("a.pid", options.PidFile);
        Assert.Equal(8333, options.HttpPort);
    }

    [Fact]
    public void Size_keys_accept_quoted_sizes_with_the_same_suffixes()
    {
        var (options, _) = Bind("max_payload: \"1MB\"\nmax_pending: '1k'");

        Assert.Equal(1024 * 1024, options.MaxPayload);
        Assert.Equal(1000L, options.MaxPending);
    }

    [Theory]
    [InlineData("http: 8222", null, 8222)]
    [InlineData("http: \"localhost:8223\"", "localhost", 8223)]
    [InlineData("http: 127.0.0.1:8224", "127.0.0.1", 8224)]
    [InlineData("http: \"[::1]:8225\"", "::1", 8225)]
    [InlineData("http_port: 8226", null, 8226)]
    [InlineData("monitor_port: -1", null, -1)]
    public void Http_takes_a_port_or_host_and_port(string text, string? host, int port)
    {
        var (options, _) = Bind(text);

        Assert.Equal(host, options.HttpHost);
        Assert.Equal(port, options.HttpPort);
    }

    [Fact]
    public void Listen_sets_host_and_port()
    {
        var (options, _) = Bind("listen: 127.0.0.1:4999");

        Assert.Equal("127.0.0.1", options.Host);
        Assert.Equal(4999, options.Port);
    }

    [Theory]
    [InlineData("ping_interval: \"2m\"", 120)]
    [InlineData("ping_interval: \"1h30m\"", 5400)]
    [InlineData("ping_interval: '500ms'", 0.5)]
    [InlineData("ping_interval: 10s", 10)]
    public void Durations_are_go_duration_strings(string text, double seconds)
    {
        var (options, warnings) = Bind(text);

        Assert.Equal(TimeSpan.FromSeconds(seconds), options.PingInterval);
        Assert.Empty(warnings);
    }

    [Fact]
    public void A_bare_integer_duration_means_seconds_with_a_warning()
    {
        var (options, warnings) = Bind("ping_interval: 45\nwrite_deadline: 3");

        Assert.Equal(TimeSpan.FromSeconds(45), options.PingInterval);
        Assert.Equal(TimeSpan.FromSeconds(3), options.WriteDeadline);
        Assert.Equal(2, warnings.Count);
        Assert.Equal("test.conf:1:0: invalid use of field \"ping_interval\": ping_interval should be converted to a duration", warnings[0]);
    }

    [Fact]
    public void Unknown_keys_are_nats_servers_errors_with_their_position_all_reported()
    {
        var e = BindFails("port: 4333\nfoo: bar\nauthorization {\n  user: a\n  colour: blue\n}\n");

        Assert.Equal(["test.conf:2:1: unknown field \"foo\"", "test.conf:5:3: unknown field \"colour\""], e.Errors);
    }

    [Theory]
    [InlineData("foo: 1", "1:0")]
    [InlineData("authorization {\n  foo: 1\n}", "2:3")]
    [InlineData("authorization {\n  users: [ { user: a, foo: 1 } ]\n}", "2:23")]
    [InlineData("accounts {\n  A { foo: 1 }\n}", "2:7")]
    [InlineData("accounts {\n  A { exports: [ { stream: a, foo: 1 } ] }\n}", "2:31")]
    [InlineData("accounts {\n  A { imports: [ { stream: { account: B, subject: a }, foo: 1 } ] }\n}", "2:56")]
    [InlineData("accounts {\n  A { jetstream: { foo: 1 } }\n}", "2:20")]
    [InlineData("cluster {\n  foo: 1\n}", "2:3")]
    [InlineData("cluster {\n  authorization { foo: 1 }\n}", "2:19")]
    [InlineData("jetstream {\n  foo: 1\n}", "2:3")]
    [InlineData("mqtt {\n  foo: 1\n}", "2:3")]
    [InlineData("mqtt {\n  authorization { foo: 1 }\n}", "2:19")]
    [InlineData("websocket {\n  foo: 1\n}", "2:3")]
    [InlineData("websocket {\n  authorization { foo: 1 }\n}", "2:19")]
    public void An_unknown_key_in_any_block_is_nats_servers_error_at_its_position(string config, string position)
    {
        var e = BindFails(config);

        Assert.Contains($"test.conf:{position}: unknown field \"foo\"", e.Errors);
    }

    [Theory]
    [InlineData("ocsp: { mode: always }", "ocsp")]
    [InlineData("allow_non_tls: true", "allow_non_tls")]
    [InlineData("trusted_keys: [ ODSKR7MYFQZ5QMFRQPYBOIAOCYMMBAZ5XSXPUSVSRVHOSZSLTEHYLIZU ]", "trusted_keys")]
    [InlineData("resolver_pinned_accounts: [ ADSKR7MYFQZ5QMFRQPYBOIAOCYMMBAZ5XSXPUSVSRVHOSZSLTEHYLIZU ]", "resolver_pinned_accounts")]
    [InlineData("authorization { auth_callout { issuer: x } }", "auth_callout")]
    [InlineData("authorization { user: a, proxy_required: true }", "proxy_required")]
    [InlineData("authorization { users: [ { user: a, allowed_connection_types: [ STANDARD ] } ] }", "allowed_connection_types")]
    [InlineData("accounts { A { exports: [ { service: \"a.*\", account_token_position: 2 } ] } }", "account_token_position")]
    [InlineData("cluster { port: -1, permissions { import: \"a.>\" } }", "permissions")]
    [InlineData("jetstream { tpm { keys_file: \"keys.json\" } }", "tpm")]
    [InlineData("tls { pinned_certs: [ \"a1b2\" ] }", "pinned_certs")]
    [InlineData("tls { ocsp_peer: true }", "ocsp_peer")]
    [InlineData("mqtt { port: -1, stream_replicas: 3 }", "stream_replicas")]
    public void A_security_or_durability_key_courier_does_not_implement_refuses_the_config(string config, string key)
    {
        var e = BindFails(config);

        Assert.Contains(e.Errors, m => m.EndsWith(
            $": field \"{key}\" is not implemented by Courier, and as it concerns security or durability a config that sets it is refused",
            StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("jetstream { key: \"s3cr3t\", cipher: aes, prev_key: \"0ld\" }", StoreCipher.Aes)]
    [InlineData("jetstream { ek: \"s3cr3t\", cipher: chachapoly, prev_ek: \"0ld\" }", StoreCipher.ChaCha)]
    [InlineData("jetstream { encryption_key: \"s3cr3t\", cipher: CHACHA, prev_encryption_key: \"0ld\" }", StoreCipher.ChaCha)]
    public void Encryption_at_rest_is_bound_with_nats_servers_key_names(string config, StoreCipher cipher)
    {
        var (options, warnings) = Bind(config);

        Assert.Empty(warnings);
        Assert.Equal("s3cr3t", options.JetStreamKey);
        Assert.Equal("0ld", options.JetStreamPreviousKey);
        Assert.Equal(cipher, options.JetStreamCipher);
        Assert.NotNull(options.JetStreamEncryption);
    }

    [Fact]
    public void Without_a_key_nothing_is_encrypted_and_chacha_is_the_default_cipher()
    {
        var (options, _) = Bind("jetstream { store_dir: \"/tmp/x\" }");

        Assert.Null(options.JetStreamEncryption);
        Assert.Equal(StoreCipher.ChaCha, options.JetStreamCipher);
    }

    [Fact]
    public void An_unknown_cipher_is_nats_servers_error()
    {
        var e = BindFails("jetstream {\n  key: k\n  cipher: des\n}");

        Assert.Contains("test.conf:3:3: Unknown cipher type: \"des\"", e.Errors);
    }

    [Fact]
    public void Nats_server_keys_courier_does_not_implement_are_reported_as_unsupported()
    {
        var (_, warnings) = Bind("logfile_max_num: 3\nsyslog: true\njetstream { strict: true }\n");

        Assert.Equal(3, warnings.Count);
        Assert.All(warnings, w => Assert.Contains("is not supported by Courier and is ignored", w));
        Assert.StartsWith("test.conf:1:0: field \"logfile_max_num\"", warnings[0]);
    }

    [Fact]
    public void The_jetstream_domain_is_bound_and_one_with_a_dot_or_wildcard_is_refused_as_nats_server_does()
    {
        var (options, warnings) = Bind("jetstream { domain: hub }\n");

        Assert.Equal("hub", options.JetStreamDomain);
        Assert.Empty(warnings);
        var error = Assert.Throws<ConfigException>(() => Bind("jetstream { domain: \"a.b\" }\n"));
        Assert.Contains("invalid domain name: may not contain ., * or >", error.Message);
    }

    [Fact]
    public void Logging_and_lame_duck_keys_are_bound()
    {
        var (options, warnings) = Bind("logtime: false\nlogfile_size_limit: 1KB\nlame_duck_duration: \"45s\"\nlame_duck_grace_period: \"3s\"\n");

        Assert.Empty(warnings);
        Assert.False(options.Logtime);
        Assert.Equal(1024, options.LogSizeLimit);
        Assert.Equal(TimeSpan.FromSeconds(45), options.LameDuckDuration);
        Assert.Equal(TimeSpan.FromSeconds(3), options.LameDuckGracePeriod);
    }

    [Fact]
    public void A_lame_duck_duration_under_30_seconds_is_refused_as_nats_server()
    {
        var error = Assert.Throws<ConfigException>(() => Bind("lame_duck_duration: \"2s\"\n"));

        Assert.Contains("invalid lame_duck_duration of 2s, minimum is 30 seconds", error.Message);
    }

    [Fact]
    public void Idle_poll_is_a_duration_zero_turns_it_off_and_past_10ms_it_is_refused()
    {
        Assert.Equal(TimeSpan.FromMicroseconds(100), Bind("").Options.IdlePoll);
        Assert.Equal(TimeSpan.FromMicroseconds(250), Bind("idle_poll: \"250us\"\n").Options.IdlePoll);
        Assert.Equal(TimeSpan.Zero, Bind("idle_poll: \"0s\"\n").Options.IdlePoll);

        var error = Assert.Throws<ConfigException>(() => Bind("idle_poll: \"1s\"\n"));
        Assert.Contains("invalid idle_poll of 1s, it must be between 0 (off) and 10ms", error.Message);
    }

    [Fact]
    public void Keys_only_used_as_variables_are_not_reported()
    {
        var (options, warnings) = Bind("SECRET = abc\nauthorization { token: $SECRET }");

        Assert.Empty(warnings);
        Assert.Equal("abc", options.Token);
    }

    [Theory]
    [InlineData("port: \"abc\"", "expected an integer for \"port\", got string \"abc\"")]
    [InlineData("port: 70000", "is not a port")]
    [InlineData("port: -2", "is not a port")]
    [InlineData("debug: 1", "expected a bool for \"debug\", got integer 1")]
    [InlineData("host: [a]", "expected a string for \"host\"")]
    [InlineData("max_payload: 3GB", "max_payload value is too big")]
    [InlineData("max_payload: \"lots\"", "max_payload")]
    [InlineData("max_payload: true", "expected a size")]
    [InlineData("ping_interval: \"soon\"", "error parsing ping_interval: time: invalid duration")]
    [InlineData("ping_interval: 1.5", "expected a duration")]
    [InlineData("server_name: \"a b\"", "server name cannot contain spaces")]
    [InlineData("http: \"nohostport\"", "could not parse address string")]
    [InlineData("http: \"host:abc\"", "could not parse port")]
    [InlineData("jetstream: maybe", "Expected 'enabled' or 'disabled'")]
    [InlineData("jetstream: 1", "expected a bool, 'enabled', 'disabled' or a block")]
    [InlineData("authorization: 1", "expected a block for \"authorization\"")]
    [InlineData("nats_server_version: \"\"", "cannot be empty")]
    public void Wrong_types_and_values_are_errors_with_position(string text, string message)
    {
        var e = BindFails("\n" + text);

        Assert.StartsWith("test.conf:2:1: ", e.Message);
        Assert.Contains(message, e.Message);
    }

    [Fact]
    public void All_errors_are_reported_together()
    {
        var e = BindFails("port: x\ndebug: 3\nhost: ok\ntrace: 4");

        Assert.Equal(3, e.Errors.Count);
        Assert.Equal(new ConfigPosition("test.conf", 1, 0), e.Position);
        Assert.Equal(3, e.Message.Split('\n').Length);
        Assert.StartsWith("test.conf:4:1: ", e.Errors[2]);
    }

    [Theory]
    [InlineData("jetstream: true", true)]
    [InlineData("jetstream: enabled", true)]
    [InlineData("jetstream: Enable", true)]
    [InlineData("jetstream: disabled", false)]
    [InlineData("jetstream: off", false)]
    [InlineData("jetstream {}", true)]
    [InlineData("jetstream { enabled: false }", false)]
    public void JetStream_is_a_bool_a_word_or_a_block(string text, bool enabled)
    {
        Assert.Equal(enabled, Bind(text).Options.JetStream);
    }

    [Fact]
    public void JetStream_block_sets_store_and_limits()
    {
        var (options, warnings) = Bind("""
            jetstream {
              store_dir: "/data/js"
              max_memory_store: 1GB
              max_file_store: "10G"
            }
            """);

        Assert.Empty(warnings);
        Assert.True(options.JetStream);
        Assert.Equal("/data/js", options.StoreDir);
        Assert.Equal(1L << 30, options.MaxMemoryStore);
        Assert.Equal(10L << 30, options.MaxFileStore);
    }

    [Fact]
    public void JetStream_limit_aliases_and_top_level_store_dir_bind()
    {
        var (options, _) = Bind("store_dir: /s\njetstream { max_mem: 1M, max_file: 2K }");

        Assert.Equal("/s", options.StoreDir);
        Assert.Equal(1_000_000L, options.MaxMemoryStore);
        Assert.Equal(2_000L, options.MaxFileStore);
    }

    [Fact]
    public void Store_dir_given_twice_is_an_error()
    {
        var e = BindFails("store_dir: /a\njetstream { store_dir: /b }");

        Assert.Contains("Duplicate 'store_dir' configuration", e.Message);
    }

    [Fact]
    public void JetStream_string_sizes_must_use_k_m_g_t()
    {
        var e = BindFails("jetstream { max_file_store: \"10GB\" }");

        Assert.Contains("max_file_store sizes defined as strings must end in K, M, G, T", e.Message);
    }

    [Fact]
    public void JetStream_sync_defaults_to_always_unlike_nats_servers_two_minutes()
    {
        Assert.True(new ServerOptions().JetStreamSync.IsAlways);
        Assert.True(Bind("jetstream { store_dir: /js }").Options.JetStreamSync.IsAlways);
    }

    [Theory]
    [InlineData("jetstream { sync_interval: \"1s\" }", 1)]
    [InlineData("jetstream { sync_interval: 1s }", 1)]
    [InlineData("jetstream { sync_interval: '2m' }", 120)]
    [InlineData("jetstream { sync_interval: \"250ms\" }", 0.25)]
    [InlineData("jetstream { sync: \"10s\" }", 10)]
    [InlineData("jetstream { SYNC_INTERVAL: \"1m30s\" }", 90)]
    public void JetStream_sync_interval_is_a_duration(string text, double seconds)
    {
        var (options, warnings) = Bind(text);

        Assert.Empty(warnings);
        Assert.False(options.JetStreamSync.IsAlways);
        Assert.Equal(TimeSpan.FromSeconds(seconds), options.JetStreamSync.Period);
    }

    [Theory]
    [InlineData("jetstream { sync_interval: always }")]
    [InlineData("jetstream { sync_interval: \"Always\" }")]
    [InlineData("jetstream { sync: ALWAYS }")]
    [InlineData("jetstream { sync_interval: \"0s\" }")] // zero means the default, as in nats-server (whose default is 2m)
    public void JetStream_sync_interval_always_fsyncs_before_every_ack(string text)
    {
        var options = new ServerOptions { JetStreamSync = SyncPolicy.Interval(TimeSpan.FromSeconds(5)) };
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);

        Assert.Empty(warnings);
        Assert.True(options.JetStreamSync.IsAlways);
    }

    [Fact]
    public void JetStream_sync_interval_as_bare_seconds_warns_as_every_duration()
    {
        var (options, warnings) = Bind("jetstream { sync_interval: 5 }");

        Assert.Equal(TimeSpan.FromSeconds(5), options.JetStreamSync.Period);
        Assert.Equal(["test.conf:1:12: invalid use of field \"sync_interval\": sync_interval should be converted to a duration"], warnings);
    }

    [Theory]
    [InlineData("jetstream { sync_interval: \"soon\" }", "error parsing sync_interval")]
    [InlineData("jetstream { sync_interval: \"-1s\" }", "sync_interval must be \"always\" or a duration of zero or more")]
    [InlineData("jetstream { sync_interval: true }", "expected a duration for \"sync_interval\"")]
    public void JetStream_sync_interval_rejects_what_is_neither_always_nor_a_duration(string text, string error)
    {
        var e = BindFails(text);

        Assert.Contains(error, e.Message);
    }

    [Fact]
    public void Authorization_with_user_and_password()
    {
        var (options, warnings) = Bind("authorization { user: alice, password: s3cret, timeout: 3 }");

        Assert.Empty(warnings);
        Assert.Equal("alice", options.Username);
        Assert.Equal("s3cret", options.Password);
        Assert.Equal(TimeSpan.FromSeconds(3), options.AuthTimeout);
        Assert.True(options.AuthRequired);
    }

    [Fact]
    public void Authorization_accepts_username_and_pass_aliases()
    {
        var (options, _) = Bind("authorization { username: bob, pass: pw }");

        Assert.Equal("bob", options.Username);
        Assert.Equal("pw", options.Password);
    }

    [Fact]
    public void Authorization_with_a_token()
    {
        var (options, _) = Bind("authorization { token: \"t0k3n\" }");

        Assert.Equal("t0k3n", options.Token);
        Assert.Null(options.Username);
        Assert.True(options.AuthRequired);
    }

    [Theory]
    [InlineData("timeout: 5", 5.0)]
    [InlineData("timeout: 0.5", 0.5)]
    [InlineData("timeout: \"1500ms\"", 1.5)]
    [InlineData("timeout: \"1m\"", 60.0)]
    public void Authorization_timeout_is_seconds_or_a_duration(string timeout, double seconds)
    {
        Assert.Equal(TimeSpan.FromSeconds(seconds), Bind($"authorization {{ user: a, {timeout} }}").Options.AuthTimeout);
    }

    [Fact]
    public void A_high_authorization_timeout_warns_as_nats_server()
    {
        // An unquoted 2m is the size 2,000,000 (seconds): nats-server warns about exactly this.
        var (_, warnings) = Bind("authorization { user: a\n timeout: 2m }");

        Assert.Contains("is high, consider keeping it under 60 seconds", Assert.Single(warnings));
    }

    [Theory]
    [InlineData("user: a, token: t", "Cannot have a user/pass and token")]
    [InlineData("user: a, users: [{user: b}]", "Can not have a single user/pass and a users array")]
    [InlineData("token: t, users: [{user: b}]", "Can not have a token and a users array")]
    [InlineData("users: [{password: x}]", "User entry requires a user")]
    [InlineData("users: [{user: a}, {user: a}]", "Duplicate user \"a\" detected")]
    [InlineData("users: {user: a}", "Expected users field to be an array")]
    [InlineData("users: [a]", "Expected user entry to be a map/struct")]
    [InlineData("timeout: true", "'timeout' wrong type")]
    [InlineData("timeout: \"x\"", "'timeout' time: invalid duration")]
    public void Conflicting_or_malformed_authorization_is_an_error(string body, string message)
    {
        var e = BindFails($"authorization {{ {body} }}");

        Assert.Contains(message, e.Message);
    }

    [Fact]
    public void Users_list_with_per_user_permissions()
    {
        var (options, warnings) = Bind("""
            authorization {
              users = [
                { user: alice, password: one }
                { user: bob, password: two, permissions: { publish: "bob.>", subscribe: ["bob.>", "_INBOX.>"] } }
                { username: carol, pass: three, permission: { pub: { allow: ["a.*"], deny: "a.secret" } } }
              ]
            }
            """);

        Assert.Empty(warnings);
        Assert.Equal(3, options.Users.Count);
        Assert.True(options.AuthRequired);
        Assert.Equal(new UserEntry("alice", "one", null), options.Users[0]);

        var bob = options.Users[1];
        Assert.Equal("two", bob.Password);
        Assert.Equal(["bob.>"], bob.Permissions!.Publish!.Allow!);
        Assert.Null(bob.Permissions.Publish.Deny);
        Assert.Equal(["bob.>", "_INBOX.>"], bob.Permissions.Subscribe!.Allow!);

        var carol = options.Users[2];
        Assert.Equal("carol", carol.User);
        Assert.Equal(["a.*"], carol.Permissions!.Publish!.Allow!);
        Assert.Equal(["a.secret"], carol.Permissions.Publish.Deny!);
        Assert.Null(carol.Permissions.Subscribe);
    }

    [Fact]
    public void Default_permissions_apply_to_users_without_their_own()
    {
        var (options, _) = Bind("""
            authorization {
              default_permissions: { publish: "public.>" }
              users: [ { user: a }, { user: b, permissions: { publish: "b.>" } } ]
            }
            """);

        Assert.Equal(["public.>"], options.DefaultPermissions!.Publish!.Allow!);
        Assert.Equal(["public.>"], options.Users[0].Permissions!.Publish!.Allow!);
        Assert.Equal(["b.>"], options.Users[1].Permissions!.Publish!.Allow!);
    }

    [Theory]
    [InlineData("publish = \"a.b\"", new[] { "a.b" }, null)]
    [InlineData("publish = [\"a\", \"b.*\"]", new[] { "a", "b.*" }, null)]
    [InlineData("publish = { allow = \"x\" }", new[] { "x" }, null)]
    [InlineData("publish = { deny = [\"y\", \"z.>\"] }", null, new[] { "y", "z.>" })]
    [InlineData("publish = { allow = [\"x.>\"], deny = \"x.secret\" }", new[] { "x.>" }, new[] { "x.secret" })]
    [InlineData("pub = \"p\"", new[] { "p" }, null)]
    [InlineData("import = \"i\"", new[] { "i" }, null)]
    public void Permission_forms_plain_string_list_or_allow_deny_block(string publish, string[]? allow, string[]? deny)
    {
        var (options, warnings) = Bind($"authorization {{ user: u\n permissions {{ {publish} }} }}");

        Assert.Empty(warnings);
        var permission = options.DefaultPermissions!.Publish!;
        Assert.Equal(allow, permission.Allow);
        Assert.Equal(deny, permission.Deny);
    }

    [Fact]
    public void Subscribe_permissions_accept_aliases_and_queue_groups()
    {
        var (options, _) = Bind("authorization { user: u\n permissions { sub: [\"jobs.* workers\", \"x\"] } }");

        Assert.Equal(["jobs.* workers", "x"], options.DefaultPermissions!.Subscribe!.Allow!);
    }

    [Fact]
    public void An_empty_permission_block_or_list_means_no_restriction()
    {
        var (options, _) = Bind("authorization { user: u\n permissions { publish: {}, subscribe: [] } }");

        Assert.Null(options.DefaultPermissions!.Publish);
        Assert.Null(options.DefaultPermissions.Subscribe!.Allow);
    }

    [Theory]
    [InlineData("publish: \"a..b\"", "subject \"a..b\" is not a valid subject")]
    [InlineData("publish: \"a.>.b\"", "is not a valid subject")]
    [InlineData("publish: \"jobs workers\"", "is not a valid subject")]
    [InlineData("subscribe: \"a b c\"", "is not a valid subject")]
    [InlineData("subscribe: \"a b..\"", "queue \"b..\" is not a valid queue")]
    [InlineData("publish: [1]", "Subject in permissions array cannot be cast to string")]
    [InlineData("publish: 5", "Expected subject permissions to be a subject, or array of subjects")]
    public void Invalid_permission_subjects_are_errors(string body, string message)
    {
        var e = BindFails($"authorization {{ user: u\n permissions {{ {body} }} }}");

        Assert.Contains(message, e.Message);
    }

    [Fact]
    public void Unknown_keys_inside_users_and_permissions_are_nats_servers_errors()
    {
        var e = BindFails("""
            authorization {
              users: [ { user: a, colour: red, permissions: { publish: { allow: x, maybe: y }, other: 1, allow_responses: true } } ]
            }
            """);

        Assert.Equal(
            [
                "test.conf:2:23: unknown field \"colour\"",
                "test.conf:2:72: Unknown field name \"maybe\" parsing subject permissions, only 'allow' or 'deny' are permitted",
                "test.conf:2:84: Unknown field \"other\" parsing permissions",
            ],
            e.Errors);
    }

    [Fact]
    public void Nkey_users_bind_beside_password_users_with_the_default_permissions()
    {
        var (options, warnings) = Bind("""
            authorization {
              default_permissions: { publish: "x.>" }
              users: [ { nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4 }, { user: a } ]
            }
            """);

        Assert.Equal("a", Assert.Single(options.Users).User);
        var nkey = Assert.Single(options.NkeyUsers);
        Assert.Equal("UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", nkey.Nkey);
        Assert.Equal(["x.>"], nkey.Permissions?.Publish?.Allow);
        Assert.True(options.AuthRequired);
        Assert.True(options.NonceRequired);
        Assert.Empty(warnings);
    }

    [Theory]
    [InlineData("{ nkey: UABC }", "Not a valid public nkey for a user")]
    [InlineData("{ nkey: ADXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4 }", "Not a valid public nkey for a user")]
    [InlineData("{ nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4, user: a }", "Nkey users do not take usernames or passwords")]
    public void Bad_nkey_users_are_errors_as_in_nats_server(string user, string error)
    {
        Assert.Contains(error, BindFails($"authorization {{ users: [ {user} ] }}").Message);
    }

    [Fact]
    public void An_operator_that_is_neither_a_file_nor_a_JWT_is_an_error()
    {
        Assert.Contains("error parsing operator JWT", BindFails("operator: /no/such/operator.jwt\nresolver: MEMORY").Message);
    }

    [Fact]
    public void A_resolver_without_an_operator_is_ignored()
    {
        var (options, _) = Bind("resolver: MEMORY");

        Assert.Null(options.Operator);
        Assert.False(options.AuthRequired);
    }
}
