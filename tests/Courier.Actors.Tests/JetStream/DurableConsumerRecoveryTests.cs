using System.Globalization;
using System.Text;
using System.Text.Json;
using Akka.Event;
using Akka.TestKit;
using Courier.Actors.Hosting;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// Many durable consumers recover at startup through the journal and snapshot-store plugins, with the
/// recovery and circuit-breaker settings of reference.conf: no recovery times out, no consumer is lost,
/// every one keeps its ack floor. Also pages CONSUMER.NAMES and CONSUMER.LIST as nats-server does.
/// </summary>
public sealed class DurableConsumerRecoveryTests : IDisposable
{
    private const int Consumers = 1000;
    private readonly string _storeDir = Directory.CreateTempSubdirectory("courier-many-").FullName;

    [Fact]
    public async Task A_thousand_durable_consumers_recover_after_a_restart_with_their_ack_floors()
    {
        var options = new ServerOptions { Host = "127.0.0.1", JetStream = true, StoreDir = _storeDir };
        await using (var harness = await BrokerHarness.StartAsync(options))
        {
            using var c = await ConnectRequesterAsync(harness);
            await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
            await c.SendAsync("PUB fi.1 1\r\nx\r\nPUB fi.2 1\r\ny\r\nPING\r\n");
            await c.ExpectLineAsync("PONG");

            // All creates in one write; the replies come back in order.
            var creates = new StringBuilder();
            for (var i = 0; i < Consumers; i++)
            {
                var body = "{\"stream_name\":\"FI\",\"config\":{\"durable_name\":\"D" + i.ToString(CultureInfo.InvariantCulture) + "\",\"ack_policy\":\"explicit\"}}";
                creates.Append(CultureInfo.InvariantCulture, $"PUB $JS.API.CONSUMER.DURABLE.CREATE.FI.D{i} _INBOX.t.c{i} {body.Length}\r\n{body}\r\n");
            }

            await c.SendAsync(creates.ToString());
            for (var i = 0; i < Consumers; i++)
            {
                Assert.StartsWith("MSG _INBOX.t.c", await c.ReadLineAsync(TimeSpan.FromSeconds(60)), StringComparison.Ordinal);
                Assert.Contains("\"durable_name\":\"D", await c.ReadLineAsync(TimeSpan.FromSeconds(60)), StringComparison.Ordinal);
            }

            // Every 100th consumer acknowledges the first message.
            for (var i = 0; i < Consumers; i += 100)
            {
                var delivered = await FetchAsync(c, 1, consumer: $"D{i}");
                Assert.Equal("", await RequestAsync(c, delivered[0].AckSubject, "+ACK"));
            }
        }

        // A new actor system over the same directory: every consumer recovers, with no error logged.
        var system = ActorSystemConfig.CreateSystem(TestConfig.For(options), Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance);
        try
        {
            var errors = new TestProbe(system, new Akka.TestKit.Xunit2.XunitAssertions());
            system.EventStream.Subscribe(errors.Ref, typeof(Error));
            await using var harness = await BrokerHarness.StartAsync(system, options);
            using var c = await ConnectRequesterAsync(harness);

            using (var names = JsonDocument.Parse(await RequestAsync(c, "$JS.API.CONSUMER.NAMES.FI", "")))
            {
                Assert.Equal(Consumers, names.RootElement.GetProperty("total").GetInt32());
                Assert.Equal(Math.Min(Consumers, 1024), names.RootElement.GetProperty("consumers").GetArrayLength()); // a page: 1024 names at most
            }

            // CONSUMER.LIST pages by 256: each info comes from its recovered actor.
            var seen = new HashSet<string>();
            for (var offset = 0; offset < Consumers; offset += 256)
            {
                using var page = JsonDocument.Parse(await RequestAsync(c, "$JS.API.CONSUMER.LIST.FI", "{\"offset\":" + offset.ToString(CultureInfo.InvariantCulture) + "}"));
                Assert.Equal(Consumers, page.RootElement.GetProperty("total").GetInt32());
                Assert.Equal(offset, page.RootElement.GetProperty("offset").GetInt32());
                Assert.Equal(256, page.RootElement.GetProperty("limit").GetInt32());
                foreach (var info in page.RootElement.GetProperty("consumers").EnumerateArray())
                {
                    var name = info.GetProperty("name").GetString()!;
                    Assert.True(seen.Add(name));
                    var floor = info.GetProperty("ack_floor").GetProperty("stream_seq").GetUInt64();
                    var acked = int.Parse(name[1..], CultureInfo.InvariantCulture) % 100 == 0;
                    Assert.Equal(acked ? 1UL : 0UL, floor);
                }
            }

            Assert.Equal(Consumers, seen.Count);
            errors.ExpectNoMsg(TimeSpan.FromMilliseconds(200)); // no recovery timed out or failed
        }
        finally
        {
            await system.Terminate().WaitAsync(TimeSpan.FromSeconds(30));
        }
    }

    public void Dispose() => Directory.Delete(_storeDir, recursive: true);
}
