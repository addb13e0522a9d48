using System.Diagnostics;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>
/// A config file with a key the server does not know: nats-server 2.9.10 refuses to start, printing
/// <c>nats-server: file:line:col: unknown field "x"</c> and exiting with 1, and refuses a reload to
/// such a file, keeping its running configuration. Courier prints the same line (without the program
/// name) and exits the same way.
/// </summary>
public abstract class StrictConfigTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected StrictConfigTests(TServer server)
    {
        _server = server;
    }

    [Theory]
    [InlineData("port: -1\nfoo: 1\n", "2:1", "unknown field \"foo\"")]
    [InlineData("foo: 1\n", "1:0", "unknown field \"foo\"")] // nats-server's lexer counts a first line's columns from 0
    [InlineData("authorization {\n  user: a\n  colour: blue\n}\n", "3:3", "unknown field \"colour\"")]
    [InlineData("authorization {\n  users: [ { user: a, colour: red } ]\n}\n", "2:23", "unknown field \"colour\"")]
    [InlineData("authorization {\n  users: [ { user: a, permissions: { other: 1 } } ]\n}\n", "2:38", "Unknown field \"other\" parsing permissions")]
    [InlineData("accounts {\n  A { bogus: 1 }\n}\n", "2:7", "unknown field \"bogus\"")]
    [InlineData("accounts {\n  A { exports: [ { stream: a, bogus: 1 } ] }\n}\n", "2:31", "unknown field \"bogus\"")]
    [InlineData("cluster {\n  port: -1\n  bogus: 1\n}\n", "3:3", "unknown field \"bogus\"")]
    [InlineData("jetstream {\n  bogus: 1\n}\n", "2:3", "unknown field \"bogus\"")]
    [InlineData("mqtt {\n  bogus: 1\n}\n", "2:3", "unknown field \"bogus\"")]
    [InlineData("websocket {\n  port: -1, no_tls: true, bogus: 1\n}\n", "2:27", "unknown field \"bogus\"")]
    [InlineData("tls {\n  bogus: 1\n}\n", "2:3", "error parsing tls config, unknown field [\"bogus\"]")]
    public async Task An_unknown_key_refuses_the_start_with_its_position_and_exit_code_1(string config, string position, string reason)
    {
        var (exitCode, lines, file) = await StartExpectingExitAsync(_server.Kind, config);

        Assert.Equal(1, exitCode);
        Assert.Equal($"{file}:{position}: {reason}", Assert.Single(lines));
    }

    [Fact]
    public async Task A_reload_to_a_file_with_an_unknown_key_is_refused_and_the_running_config_stays()
    {
        await using var server = await _server.StartServerAsync("authorization { user: a, password: pw }\n");
        var file = Path.Combine(server.Folder, "server.conf");
        await File.WriteAllTextAsync(file, "authorization { user: a, password: changed }\nfoo: 1\n");

        await server.SignalAsync("HUP");

        await WaitForLogAsync(server, $"{file}:2:1: unknown field \"foo\"");
        Assert.Contains("Failed to reload server configuration", server.Log.All(), StringComparison.Ordinal);
        Assert.DoesNotContain("Reloaded server configuration", server.Log.All(), StringComparison.Ordinal);
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"a","pass":"pw"}""");
        Assert.False(server.HasExited, server.Diagnostics());
    }

    /// <summary>
    /// Starts a server of <paramref name="kind"/> on <paramref name="config"/> and waits for it to exit;
    /// returns its exit code, the non-empty lines of stderr with nats-server's <c>nats-server: </c> prefix
    /// removed, and the config file's path.
    /// </summary>
    internal static async Task<(int ExitCode, IReadOnlyList<string> Lines, string File)> StartExpectingExitAsync(ServerKind kind, string config)
    {
        var folder = Directory.CreateTempSubdirectory("courier-strict-").FullName;
        try
        {
            var file = Path.Combine(folder, "server.conf");
            await File.WriteAllTextAsync(file, config);
            var executable = ServerExecutable.For(kind);
            var info = new ProcessStartInfo(executable.FileName, [.. executable.LeadingArguments, "-a", "127.0.0.1", "-p", "-1", "-c", file])
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using var process = Process.Start(info)!;
            var output = process.StandardOutput.ReadToEndAsync();
            var error = process.StandardError.ReadToEndAsync();
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            try
            {
                await process.WaitForExitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                Assert.Fail($"{kind} started on a config it should refuse:\n{config}\n{await output}");
            }

            var lines = (await error).Split('\n', StringSplitOptions.RemoveEmptyEntries)
                .Select(l => l.StartsWith("nats-server: ", StringComparison.Ordinal) ? l["nats-server: ".Length..] : l)
                .ToArray();
            return (process.ExitCode, lines, file);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    internal static async Task WaitForLogAsync(ServerProcess server, string text)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (!server.Log.All().Contains(text, StringComparison.Ordinal))
        {
            Assert.True(DateTime.UtcNow < deadline, $"no \"{text}\" in the log\n{server.Diagnostics()}");
            await Task.Delay(50);
        }
    }
}

[Trait("server", "nats-server")]
public sealed class StrictConfigTests_NatsServer(NatsServerFixture server) : StrictConfigTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class StrictConfigTests_Courier(CourierFixture server) : StrictConfigTests<CourierFixture>(server);

/// <summary>
/// Keys nats-server knows and Courier does not implement, against Courier only (nats-server implements
/// them): one that concerns security or durability refuses the start with a message naming it; any
/// other is a warning and the server starts.
/// </summary>
[Trait("server", "courier")]
public sealed class UnimplementedConfigKeyTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    private const string Refused = "is not implemented by Courier, and as it concerns security or durability a config that sets it is refused";

    [Theory]
    [InlineData("tls {\n  pinned_certs: [ \"a1b2\" ]\n}\n", "2:3", "pinned_certs")]
    [InlineData("tls {\n  ocsp_peer: true\n}\n", "2:3", "ocsp_peer")]
    [InlineData("authorization {\n  users: [ { user: a, allowed_connection_types: [ STANDARD ] } ]\n}\n", "2:23", "allowed_connection_types")]
    [InlineData("authorization {\n  auth_callout { issuer: x }\n}\n", "2:3", "auth_callout")]
    [InlineData("authorization {\n  user: a\n  proxy_required: true\n}\n", "3:3", "proxy_required")]
    [InlineData("cluster {\n  port: -1\n  permissions { import: \"a.>\" }\n}\n", "3:3", "permissions")]
    [InlineData("jetstream {\n  tpm { keys_file: \"keys.json\" }\n}\n", "2:3", "tpm")]
    public async Task A_security_or_durability_key_refuses_the_start_naming_it(string config, string position, string key)
    {
        var (exitCode, lines, file) = await StrictConfigTests<CourierFixture>.StartExpectingExitAsync(server.Kind, config);

        Assert.Equal(1, exitCode);
        Assert.Contains($"{file}:{position}: field \"{key}\" {Refused}", lines);
    }

    [Fact]
    public async Task A_key_courier_only_warns_about_still_starts()
    {
        await using var started = await server.StartServerAsync("port: -1\nconnect_error_reports: 10\n");

        await StrictConfigTests<CourierFixture>.WaitForLogAsync(started, "server.conf:2:1: field \"connect_error_reports\" is not supported by Courier and is ignored");
        await using var c = await WireClient.ConnectAsync(started);
        await c.HandshakeAsync();
    }

    [Fact]
    public async Task A_reload_to_a_refused_key_keeps_the_running_config()
    {
        await using var started = await server.StartServerAsync("authorization { user: a, password: pw }\n");
        var file = Path.Combine(started.Folder, "server.conf");
        await File.WriteAllTextAsync(file, "authorization { user: a, password: changed }\njetstream {\n  tpm { keys_file: \"keys.json\" }\n}\n");

        await started.SignalAsync("HUP");

        await StrictConfigTests<CourierFixture>.WaitForLogAsync(started, $"{file}:3:3: field \"tpm\" {Refused}");
        Assert.DoesNotContain("Reloaded server configuration", started.Log.All(), StringComparison.Ordinal);
        await using var c = await WireClient.ConnectAsync(started);
        await c.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"a","pass":"pw"}""");
    }
}
