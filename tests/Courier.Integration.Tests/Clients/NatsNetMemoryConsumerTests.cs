using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// A durable consumer with <c>mem_storage</c> (issue 37: the setting had no effect): nats-server 2.9.10
/// keeps its state in memory and, after a restart, no longer has it, while a durable of the same file
/// stream without it comes back with its ack floor.
/// </summary>
public abstract class NatsNetMemoryConsumerTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsNetMemoryConsumerTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task A_mem_storage_durable_works_and_is_gone_after_a_restart_while_a_file_one_stays() =>
        NatsNetClient.AcrossRestartAsync(
            _server,
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                for (var i = 0; i < 3; i++)
                {
                    (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
                }

                foreach (var (durable, memory) in new[] { ("mem", true), ("file", false) })
                {
                    var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig(durable) { AckPolicy = ConsumerConfigAckPolicy.Explicit, MemStorage = memory }, ct);
                    Assert.Equal(memory, consumer.Info.Config.MemStorage);
                    var acked = 0;
                    await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 2, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                    {
                        await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
                        acked++;
                    }

                    Assert.Equal(2, acked);
                    Assert.Equal(2UL, (await js.GetConsumerAsync(name, durable, ct)).Info.AckFloor.StreamSeq);
                }
            },
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                Assert.Equal(2UL, (await js.GetConsumerAsync(name, "file", ct)).Info.AckFloor.StreamSeq);
                var gone = await Assert.ThrowsAsync<NatsJSApiException>(() => js.GetConsumerAsync(name, "mem", ct).AsTask());
                Assert.Equal((404, 10014), (gone.Error.Code, gone.Error.ErrCode));
            });
}

[Trait("server", "nats-server")]
public sealed class NatsNetMemoryConsumerTests_NatsServer(NatsServerFixture server) : NatsNetMemoryConsumerTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetMemoryConsumerTests_Courier(CourierFixture server) : NatsNetMemoryConsumerTests<CourierFixture>(server);
