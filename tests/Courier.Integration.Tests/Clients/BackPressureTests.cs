using System.Threading.Channels;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// Tests whose outcome depends on a consumer keeping up within the server's bounded producer stall (one
/// second at most, in nats-server as in Courier). They run alone, after the parallel classes: a test host
/// starving this test's consumer for over a second would make either server rightly declare it slow.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class AloneCollection
{
    public const string Name = "alone";
}

/// <summary>
/// Fast-producer stall through the official .NET client (NATS.Client.Core from NATS.Net). Courier only:
/// nats-server 2.9.10 stalls per message and gives up after a second, and with this client as both
/// producer and (slow) consumer it closes the connection as a slow consumer after about 85,000 of the
/// messages when the producer runs on the thread pool. Courier waits for its consumers before reading
/// more of the producer's input, so the producer is paced by the consumer instead.
/// </summary>
public abstract class BackPressureTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected BackPressureTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task A_client_publishing_256000_1KB_messages_to_its_own_subscription_receives_all_of_them()
    {
        // The server stalls the fast producer while its own subscription's pending data is high, rather
        // than declaring it a slow consumer (nats-server's fast-producer stall).
        const int Count = 256_000;
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        await using var nats = new NatsConnection(new NatsOpts
        {
            Url = _server.Url,
            Name = "natsnet-backpressure",
            MaxReconnectRetry = 0,
            SubPendingChannelFullMode = BoundedChannelFullMode.Wait, // the client reads no faster than the test consumes
            CommandTimeout = TimeSpan.FromMinutes(1), // a publish waits while the server stalls this producer
        });
        await nats.ConnectAsync();
        var disconnect = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        nats.ConnectionDisconnected += (_, args) =>
        {
            disconnect.TrySetResult(args.Message);
            return ValueTask.CompletedTask;
        };
        await using var sub = await nats.SubscribeCoreAsync<byte[]>($"{p}.own", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        var received = 0;
        var consume = Task.Run(async () =>
        {
            while (received < Count && await sub.Msgs.WaitToReadAsync(cts.Token))
            {
                while (sub.Msgs.TryRead(out var msg))
                {
                    Assert.Equal(1024, msg.Data!.Length);
                    if (++received % 1000 == 0)
                    {
                        await Task.Delay(20, cts.Token); // a consumer slower than its producer
                    }
                }
            }
        });
        var produce = Task.Run(async () =>
        {
            var payload = new byte[1024];
            for (var i = 0; i < Count; i++)
            {
                await nats.PublishAsync($"{p}.own", payload, cancellationToken: cts.Token);
            }
        });

        // A disconnect (the server declaring this client slow) ends the test at once, with its reason.
        var both = Task.WhenAll(produce, consume);
        var first = await Task.WhenAny(both, disconnect.Task);
        if (first == disconnect.Task)
        {
            Assert.Fail($"disconnected after {received} of {Count} messages: {await disconnect.Task}");
        }

        await both;
        Assert.Equal(Count, received);
        Assert.Equal(NatsConnectionState.Open, nats.ConnectionState);
    }
}

[Collection(AloneCollection.Name)]
[Trait("server", "courier")]
public sealed class BackPressureTests_Courier(CourierFixture server) : BackPressureTests<CourierFixture>(server);
