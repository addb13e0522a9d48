using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// A durable consumer with inactive_threshold (issue 37): nats-server 2.9.10 deletes it, as it does an
/// ephemeral, once it has had no pull request for that long (deleteNotActive), and the deletion is for good:
/// a restart does not bring it back. One that keeps pulling stays.
/// </summary>
public abstract class NatsNetDurableInactiveTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private static readonly TimeSpan InactiveThreshold = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan FetchEvery = TimeSpan.FromMilliseconds(300); // well inside the threshold, even with two round trips per turn on a loaded machine

    private readonly TServer _server;

    protected NatsNetDurableInactiveTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task An_idle_durable_with_inactive_threshold_is_deleted_for_good_while_a_pulling_one_stays() =>
        NatsNetClient.AcrossRestartAsync(
            _server,
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                var idle = await js.CreateOrUpdateConsumerAsync(name, Durable("idle"), ct);
                Assert.Equal(InactiveThreshold, idle.Info.Config.InactiveThreshold);
                var busy = await js.CreateOrUpdateConsumerAsync(name, Durable("busy"), ct);

                var started = DateTime.UtcNow;
                var idleGone = false;
                var lastPull = DateTime.UtcNow;
                var longestGap = TimeSpan.Zero; // between two pulls of the busy one, as the client saw it
                while (DateTime.UtcNow - started < TimeSpan.FromSeconds(15) && !(idleGone && DateTime.UtcNow - started > TimeSpan.FromSeconds(6)))
                {
                    await foreach (var unused in busy.FetchNoWaitAsync<int>(new NatsJSFetchOpts { MaxMsgs = 1 }, cancellationToken: ct))
                    {
                    }

                    var now = DateTime.UtcNow;
                    longestGap = now - lastPull > longestGap ? now - lastPull : longestGap;
                    lastPull = now;

                    idleGone = idleGone || await IsGoneAsync(js, name, "idle", ct);
                    await Task.Delay(FetchEvery, ct);
                }

                Assert.True(idleGone, "the idle durable was still there after 15 s");
                Assert.True(longestGap < InactiveThreshold, $"the test pulled too rarely to say anything: {longestGap.TotalMilliseconds:F0} ms between two pulls");
                Assert.False(await IsGoneAsync(js, name, "busy", ct), $"the durable that kept pulling was deleted (longest gap between its pulls: {longestGap.TotalMilliseconds:F0} ms)");
            },
            async (_, js, p, ct) =>
                Assert.True(await IsGoneAsync(js, NatsNetClient.NameFor(p), "idle", ct), "the expired durable came back after a restart"));

    private static ConsumerConfig Durable(string name) => new(name)
    {
        AckPolicy = ConsumerConfigAckPolicy.Explicit,
        InactiveThreshold = InactiveThreshold,
    };

    /// <summary>CONSUMER.INFO answers 404/10014 'consumer not found'.</summary>
    private static async Task<bool> IsGoneAsync(NatsJSContext js, string stream, string consumer, CancellationToken ct)
    {
        try
        {
            await js.GetConsumerAsync(stream, consumer, ct);
            return false;
        }
        catch (NatsJSApiException e) when (e.Error.Code == 404)
        {
            Assert.Equal(10014, e.Error.ErrCode);
            return true;
        }
    }
}

[Trait("server", "nats-server")]
public sealed class NatsNetDurableInactiveTests_NatsServer(NatsServerFixture server) : NatsNetDurableInactiveTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetDurableInactiveTests_Courier(CourierFixture server) : NatsNetDurableInactiveTests<CourierFixture>(server);
