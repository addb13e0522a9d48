using System.Diagnostics;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Operations;

/// <summary>Log line format, log file reopen (SIGUSR1), config reload (SIGHUP, <c>--signal reload</c>), lame duck mode (SIGUSR2, <c>--signal ldm</c>).</summary>
public abstract partial class OperationsTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    // nats-server 2.9 refuses a lame_duck_duration under 30 s; with one client the close comes right
    // after the grace period, so the test still takes about a second.
    private const string LameDuckConfig = """
        lame_duck_duration: "30s"
        lame_duck_grace_period: "1s"
        """;

    private const string UsersConfig = """
        authorization {
          users = [
            { user: alice, password: apw }
            { user: bob, password: bpw }
          ]
        }
        """;

    // bob's password changes; alice may now publish only to public.>.
    private const string ChangedUsersConfig = """
        authorization {
          users = [
            { user: alice, password: apw, permissions: { publish: "public.>" } }
            { user: bob, password: newbpw }
          ]
        }
        """;

    private const string ProtocolOneConnect = """{"verbose":false,"pedantic":false,"protocol":1}""";

    private static readonly TimeSpan WaitLimit = TimeSpan.FromSeconds(20);

    private readonly TServer _server;

    protected OperationsTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Log_lines_have_the_pid_the_time_and_the_level_label()
    {
        await using var server = await _server.StartServerAsync();

        var line = await WaitForAsync(() => server.Log.All().Split('\n').FirstOrDefault(l => l.Contains("Server is ready", StringComparison.Ordinal)));

        Assert.Matches(ReadyLine(), line);
    }

    [Fact]
    public async Task Without_logtime_log_lines_have_no_timestamp()
    {
        await using var server = await _server.StartServerAsync(null, "-T=false");

        var line = await WaitForAsync(() => server.Log.All().Split('\n').FirstOrDefault(l => l.Contains("Server is ready", StringComparison.Ordinal)));

        Assert.Matches(UntimedReadyLine(), line);
    }

    [Theory]
    [InlineData("INT", 0, "")]
    [InlineData("TERM", 1, "")]
    [InlineData("INT", 0, "INT QUIT")] // a shell starts a script's `server &` so; nats-server handles them anyway
    public async Task Sigint_and_sigterm_stop_the_server_with_nats_servers_exit_codes(string signal, int exitCode, string ignoredAtStart)
    {
        await using var server = ignoredAtStart.Length == 0
            ? await _server.StartServerAsync()
            : await ServerProcess.StartWithSignalsIgnoredAsync(_server.Kind, ignoredAtStart.Split(' '));
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync();

        c.Timeout = WaitLimit; // a loaded machine may take seconds to run the handler; the test is not about speed
        await server.SignalAsync(signal);

        await c.ExpectClosedAsync();
        var exited = await server.WaitForExitAsync(WaitLimit);
        if (_server.Kind == ServerKind.NatsServer && signal == "TERM")
        {
            // nats-server's SIGTERM handler shuts down and then calls os.Exit(1), but its main goroutine,
            // woken by the same shutdown, may return first: it then exits 0.
            Assert.True(exited == exitCode || exited == 0, $"exit code {exited}");
        }
        else
        {
            Assert.Equal(exitCode, exited);
        }

        Assert.Contains("Server Exiting..", server.Log.All(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Sighup_reloads_a_server_started_under_nohup()
    {
        // nohup starts its command with SIGHUP ignored; nats-server still reloads on it.
        await using var server = await ServerProcess.StartWithSignalsIgnoredAsync(_server.Kind, ["HUP"], UsersConfig);
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), ChangedUsersConfig);

        await server.SignalAsync("HUP");

        await WaitForAsync(() => server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) ? "reloaded" : null);
        await ExpectBobsNewPasswordOnlyAsync(server);
    }

    [Fact]
    public async Task Sigusr1_reopens_a_log_file_that_was_moved()
    {
        var folder = Directory.CreateTempSubdirectory("courier-log-").FullName;
        try
        {
            var logFile = Path.Combine(folder, "server.log");
            await using var server = await _server.StartServerAsync(null, "-l", logFile);
            await WaitForAsync(() => File.Exists(logFile) && File.ReadAllText(logFile).Contains("Server is ready", StringComparison.Ordinal) ? logFile : null);
            File.Move(logFile, logFile + ".1");

            await server.SignalAsync("USR1");

            var text = await WaitForAsync(() => File.Exists(logFile) && File.ReadAllText(logFile) is { } t && t.Contains("File log re-opened", StringComparison.Ordinal) ? File.ReadAllText(logFile) : null);
            Assert.Matches(ReopenedLine(), text);
            Assert.False(server.HasExited, server.Diagnostics());
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public async Task A_log_file_past_its_size_limit_is_rotated_to_a_timestamped_backup()
    {
        var folder = Directory.CreateTempSubdirectory("courier-log-").FullName;
        try
        {
            var logFile = Path.Combine(folder, "server.log");
            await using var server = await _server.StartServerAsync("logfile_size_limit: 2KB\n", "-l", logFile, "-DV");
            // Each connection logs a few debug and trace lines; stop once a backup appears (bounded).
            string? backup = null;
            for (var i = 0; i < 200 && backup is null; i++)
            {
                await using (var c = await WireClient.ConnectAsync(server))
                {
                    await c.HandshakeAsync();
                }

                backup = Directory.GetFiles(folder).FirstOrDefault(f => BackupName().IsMatch(Path.GetFileName(f)));
            }

            Assert.True(backup is not null, $"no backup in {string.Join(", ", Directory.GetFiles(folder))}\n{server.Diagnostics()}");
            var text = await WaitForAsync(() => File.Exists(logFile) && File.ReadAllText(logFile) is { Length: > 0 } t ? t : null);
            Assert.Contains($"[INF] Rotated log, backup saved as \"{backup}\"", text, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public async Task Sigusr2_sends_ldm_info_closes_the_client_after_the_grace_period_and_exits_0()
    {
        await using var server = await _server.StartServerAsync(LameDuckConfig);
        await LameDuckAsync(server, () => server.SignalAsync("USR2"));
    }

    [Fact]
    public async Task Signal_ldm_with_a_pid_puts_the_server_in_lame_duck_mode()
    {
        await using var server = await _server.StartServerAsync(LameDuckConfig);
        await LameDuckAsync(server, async () =>
        {
            var (exitCode, output) = await server.RunCommandAsync("--signal", $"ldm={server.Pid}");
            Assert.True(exitCode == 0, output);
        });
    }

    [Fact]
    public async Task Lame_duck_mode_keeps_acknowledged_jetstream_messages_for_the_next_start()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-ldm-js-").FullName;
        try
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            await using (var server = await _server.StartServerAsync(LameDuckConfig, "-js", "-sd", storeDir))
            {
                await using (var nats = await NatsNetClient.ConnectAsync(server.Url))
                {
                    var js = new NatsJSContext(nats);
                    await js.CreateStreamAsync(new StreamConfig("LDM", ["ldm.>"]), cts.Token);
                    for (var i = 1; i <= 3; i++)
                    {
                        var ack = await js.PublishAsync($"ldm.{i}", $"m{i}", cancellationToken: cts.Token);
                        Assert.Equal((ulong)i, ack.Seq);
                    }
                }

                await server.SignalAsync("USR2");
                Assert.Equal(0, await server.WaitForExitAsync(WaitLimit));
            }

            await using var restarted = await _server.StartServerAsync(null, "-js", "-sd", storeDir);
            await using var again = await NatsNetClient.ConnectAsync(restarted.Url);
            var stream = await new NatsJSContext(again).GetStreamAsync("LDM", cancellationToken: cts.Token);
            Assert.Equal(3, stream.Info.State.Messages);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Signal_with_a_pid_that_is_not_a_number_is_refused()
    {
        await using var server = await _server.StartServerAsync();

        var (exitCode, output) = await server.RunCommandAsync("--signal", "ldm=notapid");

        Assert.Equal(1, exitCode);
        Assert.Contains("invalid pid: notapid", output, StringComparison.Ordinal);
        Assert.False(server.HasExited, server.Diagnostics());
    }

    [Fact]
    public async Task Sighup_reload_applies_new_passwords_and_permissions_to_new_and_existing_clients()
    {
        await using var server = await _server.StartServerAsync(UsersConfig);
        await using var alice = await LoginAsync(server, "alice", "apw");
        await using var bob = await LoginAsync(server, "bob", "bpw");
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), ChangedUsersConfig);

        await server.SignalAsync("HUP");

        await WaitForAsync(() => server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) ? "reloaded" : null);
        await bob.ExpectErrAndCloseAsync("Authorization Violation");
        await alice.SendAsync("PUB secret.x 1\r\na\r\n");
        await alice.ExpectAsync("-ERR 'Permissions Violation for Publish to \"secret.x\"'\r\n");
        await alice.PingPongAsync();
        await ExpectBobsNewPasswordOnlyAsync(server);
    }

    [Fact]
    public async Task A_refused_reload_keeps_the_running_configuration()
    {
        await using var server = await _server.StartServerAsync(UsersConfig);
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "server_name: renamed\n" + ChangedUsersConfig);

        await server.SignalAsync("HUP");

        await WaitForAsync(() => server.Log.All().Contains("Failed to reload server configuration: config reload not supported for ServerName", StringComparison.Ordinal) ? "refused" : null);
        await using var bob = await LoginAsync(server, "bob", "bpw");
        Assert.DoesNotContain("Reloaded server configuration", server.Log.All(), StringComparison.Ordinal);
        Assert.False(server.HasExited, server.Diagnostics());
    }

    [Fact]
    public async Task Sighup_reload_applies_max_payload_and_max_control_line_to_new_and_existing_clients()
    {
        await using var server = await _server.StartServerAsync("max_payload: 1024\n");
        await using var existing = await WireClient.ConnectAsync(server);
        await existing.HandshakeAsync();
        await using var other = await WireClient.ConnectAsync(server);
        await other.HandshakeAsync();
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "max_payload: 64\nmax_control_line: 256\n");

        await server.SignalAsync("HUP");

        await WaitForAsync(() => server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) ? "reloaded" : null);
        Assert.Contains("Reloaded: max_payload = 64", server.Log.All(), StringComparison.Ordinal);
        Assert.Contains("Reloaded: max_control_line = 256", server.Log.All(), StringComparison.Ordinal);

        // A client connected before the reload: 64 bytes go, 100 are over the new limit.
        await existing.SendAsync($"PUB small 64\r\n{new string('a', 64)}\r\nPING\r\n");
        await existing.ExpectAsync("PONG\r\n");
        await existing.SendAsync($"PUB big 100\r\n{new string('a', 100)}\r\n");
        await existing.ExpectErrAndCloseAsync("Maximum Payload Violation");

        // Its control lines too.
        await other.SendAsync($"SUB {new string('s', 300)} 1\r\n");
        await other.ExpectErrAndCloseAsync("maximum control line exceeded");

        // A new client is told the new limit.
        await using var fresh = await WireClient.ConnectAsync(server);
        Assert.Equal(64, fresh.Info.GetProperty("max_payload").GetInt32());
    }

    [Fact]
    public async Task Sighup_reload_lowering_max_connections_closes_the_clients_past_it()
    {
        await using var server = await _server.StartServerAsync("max_connections: 10\n");
        var clients = new List<WireClient>();
        try
        {
            for (var i = 0; i < 3; i++)
            {
                var c = await WireClient.ConnectAsync(server);
                await c.HandshakeAsync();
                clients.Add(c);
            }

            await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "max_connections: 1\n");
            await server.SignalAsync("HUP");
            await WaitForAsync(() => server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) ? "reloaded" : null);
            Assert.Contains("Closed 2 connections to fall within max_connections", server.Log.All(), StringComparison.Ordinal);
            Assert.Contains("Reloaded: max_connections = 1", server.Log.All(), StringComparison.Ordinal);

            // Two of the three are closed with nats-server's error, one stays.
            var closed = 0;
            foreach (var c in clients)
            {
                try
                {
                    await c.SendAsync("PING\r\n");
                    await c.ExpectAsync("PONG\r\n");
                }
                catch (Exception e) when (e is Xunit.Sdk.XunitException or IOException or SocketException)
                {
                    closed++;
                }
            }

            Assert.Equal(2, closed);
        }
        finally
        {
            foreach (var c in clients)
            {
                await c.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task A_reload_that_changes_max_pending_is_refused_as_nats_server_refuses_it()
    {
        await using var server = await _server.StartServerAsync("max_pending: 67108864\n");
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "max_pending: 1048576\n");

        await server.SignalAsync("HUP");

        await WaitForAsync(() => server.Log.All().Contains("config reload not supported for MaxPending: old=67108864, new=1048576", StringComparison.Ordinal) ? "refused" : null);
        Assert.DoesNotContain("Reloaded server configuration", server.Log.All(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Signal_reload_with_a_pid_file_reloads_the_config()
    {
        var pidFile = Path.Combine(Path.GetTempPath(), $"courier-it-{Guid.NewGuid():N}.pid");
        try
        {
            await using var server = await _server.StartServerAsync(UsersConfig, "-P", pidFile);
            await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), ChangedUsersConfig);

            var (exitCode, output) = await server.RunCommandAsync("--signal", $"reload={pidFile}");

            Assert.True(exitCode == 0, output);
            await WaitForAsync(() => server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) ? "reloaded" : null);
            await using var bob = await LoginAsync(server, "bob", "newbpw");
        }
        finally
        {
            File.Delete(pidFile);
        }
    }

    /// <summary>After a reload to <see cref="ChangedUsersConfig"/>: bob logs in with his new password, and his old one is refused.</summary>
    private static async Task ExpectBobsNewPasswordOnlyAsync(ServerProcess server)
    {
        await using var newBob = await LoginAsync(server, "bob", "newbpw");
        await using var oldBob = await WireClient.ConnectAsync(server);
        await oldBob.SendAsync("CONNECT {\"verbose\":false,\"user\":\"bob\",\"pass\":\"bpw\"}\r\nPING\r\n");
        await oldBob.ExpectErrAndCloseAsync("Authorization Violation");
    }

    private static async Task<WireClient> LoginAsync(ServerProcess server, string user, string password)
    {
        var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync($$"""{"verbose":false,"pedantic":false,"user":"{{user}}","pass":"{{password}}"}""");
        return c;
    }

    private static async Task LameDuckAsync(ServerProcess server, Func<Task> signal)
    {
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync(ProtocolOneConnect);
        var clock = Stopwatch.StartNew();

        await signal();

        var info = await c.ExpectLineAsync(LameDuckInfo());
        Assert.Contains("\"ldm\":true", info, StringComparison.Ordinal);
        await Assert.ThrowsAnyAsync<SocketException>(async () =>
        {
            using var refused = new TcpClient();
            await refused.ConnectAsync("127.0.0.1", server.Port);
        });
        c.Timeout = WaitLimit;
        await c.ExpectClosedAsync();
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(0.9), $"closed after {clock.Elapsed}, before the 1 s grace period");
        Assert.Equal(0, await server.WaitForExitAsync(WaitLimit));
        Assert.Contains("Entering lame duck mode, stop accepting new clients", server.Log.All(), StringComparison.Ordinal);
    }

    private static async Task<string> WaitForAsync(Func<string?> probe)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < WaitLimit)
        {
            if (probe() is { } found)
            {
                return found;
            }

            await Task.Delay(50);
        }

        throw new TimeoutException("condition not met within 20 s");
    }

    [GeneratedRegex(@"^\[err\] \[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[INF\] Server is ready$")]
    private static partial Regex ReadyLine();

    [GeneratedRegex(@"^\[err\] \[\d+\] \[INF\] Server is ready$")]
    private static partial Regex UntimedReadyLine();

    [GeneratedRegex(@"(?m)^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[INF\] File log re-opened\r?$")]
    private static partial Regex ReopenedLine();

    [GeneratedRegex(@"^server\.log\.\d{4}\.\d\d\.\d\d\.\d\d\.\d\d\.\d\d\.\d{9}$")]
    private static partial Regex BackupName();

    [GeneratedRegex("^INFO .*\"ldm\":true")]
    private static partial Regex LameDuckInfo();
}

[Trait("server", "nats-server")]
public sealed class OperationsTests_NatsServer(NatsServerFixture server) : OperationsTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class OperationsTests_Courier(CourierFixture server) : OperationsTests<CourierFixture>(server);
