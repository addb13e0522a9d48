using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Connections of the official .NET client (NATS.Net) to a server under test.</summary>
public static class NatsNetClient
{
    /// <summary>Bounds every NATS.Net test: connect, requests and reads all end within it.</summary>
    public static readonly TimeSpan TestTimeout = TimeSpan.FromSeconds(30);

    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10); // courier's first JetStream requests JIT

    /// <summary>Connects to <paramref name="url"/> (no reconnects: a dropped connection fails the test).</summary>
    public static async Task<NatsConnection> ConnectAsync(string url, string name = "natsnet-it")
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = name,
            RequestTimeout = RequestTimeout,
            CommandTimeout = RequestTimeout,
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }

    /// <summary>Runs <paramref name="test"/> with a NATS.Net JetStream context on a fresh <c>-js</c> server of
    /// <paramref name="fixture"/>'s kind, a subject prefix of its own and a token that bounds it.</summary>
    public static Task WithJetStreamAsync(ServerFixture fixture, Func<NatsJSContext, string, CancellationToken, Task> test) =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(TestTimeout);
            await using var nats = await ConnectAsync(server.Url);
            await test(new NatsJSContext(nats), Subjects.NewPrefix(), cts.Token);
        });

    /// <summary>As above, with the connection itself too (for requests the JetStream context has no call for).</summary>
    public static Task WithJetStreamAsync(ServerFixture fixture, Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> test) =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(TestTimeout);
            await using var nats = await ConnectAsync(server.Url);
            await test(nats, new NatsJSContext(nats), Subjects.NewPrefix(), cts.Token);
        });

    /// <summary>
    /// What survives a restart: runs <paramref name="before"/> on a fresh <c>-js</c> server of
    /// <paramref name="fixture"/>'s kind with a store directory of its own, stops it gracefully (SIGTERM, so
    /// both servers have written what they hold), starts another on the same directory and runs
    /// <paramref name="after"/> there. Both get a connection, its JetStream context, the test's subject prefix
    /// and one token that bounds the whole test (90 s: two starts).
    /// </summary>
    public static async Task AcrossRestartAsync(
        ServerFixture fixture,
        Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> before,
        Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> after)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var storeDir = Directory.CreateTempSubdirectory("courier-js-").FullName;
        try
        {
            var prefix = Subjects.NewPrefix();
            await using (var server = await fixture.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await ConnectAsync(server.Url);
                await before(nats, new NatsJSContext(nats), prefix, cts.Token);
                await server.SignalAsync("TERM");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            await using (var server = await fixture.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await ConnectAsync(server.Url);
                await after(nats, new NatsJSContext(nats), prefix, cts.Token);
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>A stream or bucket name unique to the test, from its subject prefix (names may hold no dot).</summary>
    public static string NameFor(string prefix) => prefix.Replace('.', '_');
}
