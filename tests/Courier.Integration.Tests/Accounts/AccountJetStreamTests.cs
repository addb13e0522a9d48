using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Accounts;

/// <summary>JetStream per account: each account's streams apart, under its own directory, within its limits.</summary>
public abstract class AccountJetStreamTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        accounts {
          J1: { users: [ {user: j1, password: j1} ], jetstream: enabled }
          J2: { users: [ {user: j2, password: j2} ], jetstream: { max_streams: 1, max_mem: 1024, max_file: 1048576 } }
          J3: { users: [ {user: j3, password: j3} ], jetstream: { max_consumers: 2 } }
          N: { users: [ {user: n, password: n} ] }
        }
        """;

    private readonly TServer _server;

    protected AccountJetStreamTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task Two_accounts_have_streams_of_the_same_name_apart_each_under_its_own_directory() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await using var one = await AccountConfig.ConnectAsync(server.Url, "j1");
                await using var two = await AccountConfig.ConnectAsync(server.Url, "j2");
                var js1 = new NatsJSContext(one);
                var js2 = new NatsJSContext(two);
                await js1.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);
                await js2.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);

                var ack = await js1.PublishAsync("orders.1", "in j1", cancellationToken: cts.Token);
                ack.EnsureSuccess();
                await js1.PublishAsync("orders.2", "in j1", cancellationToken: cts.Token);
                await js2.PublishAsync("orders.1", "in j2", cancellationToken: cts.Token);

                Assert.Equal(2L, (await js1.GetStreamAsync("ORDERS", cancellationToken: cts.Token)).Info.State.Messages);
                Assert.Equal(1L, (await js2.GetStreamAsync("ORDERS", cancellationToken: cts.Token)).Info.State.Messages);

                // nats-server's layout: <store_dir>/jetstream/<account>/streams/<stream>.
                var storeDir = server.CommandLine.Split(' ').SkipWhile(a => a != "-sd").Skip(1).First();
                Assert.True(Directory.Exists(Path.Combine(storeDir, "jetstream", "J1", "streams", "ORDERS")), storeDir);
                Assert.True(Directory.Exists(Path.Combine(storeDir, "jetstream", "J2", "streams", "ORDERS")), storeDir);
            },
            Config);

    [Fact]
    public Task An_accounts_limits_refuse_streams_beyond_them_with_nats_servers_codes() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await using var two = await AccountConfig.ConnectAsync(server.Url, "j2");
                var js = new NatsJSContext(two);

                // max_mem 1024: a memory stream reserving more does not fit.
                var memory = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                    await js.CreateStreamAsync(new StreamConfig("BIG", ["big.>"]) { Storage = StreamConfigStorage.Memory, MaxBytes = 4096 }, cts.Token));
                Assert.Equal(10028, memory.Error.ErrCode);

                await js.CreateStreamAsync(new StreamConfig("FIRST", ["first.>"]), cts.Token);
                var streams = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                    await js.CreateStreamAsync(new StreamConfig("SECOND", ["second.>"]), cts.Token));
                Assert.Equal(10027, streams.Error.ErrCode);
                Assert.Equal("maximum number of streams reached", streams.Error.Description);

                var info = await js.GetAccountInfoAsync(cts.Token);
                Assert.Equal(1, info.Limits.MaxStreams);
                Assert.Equal(1024, info.Limits.MaxMemory);
            },
            Config);

    [Fact]
    public Task An_accounts_max_consumers_caps_each_stream_and_refuses_a_stream_asking_for_more() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await using var three = await AccountConfig.ConnectAsync(server.Url, "j3");
                var js = new NatsJSContext(three);

                var greedy = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                    await js.CreateStreamAsync(new StreamConfig("GREEDY", ["greedy.>"]) { MaxConsumers = 5 }, cts.Token));
                Assert.Equal((400, 10026, "maximum consumers limit reached"), (greedy.Error.Code, greedy.Error.ErrCode, greedy.Error.Description));

                // Each stream may have the account's max_consumers (not the account in all), or its own lower figure.
                foreach (var (stream, allowed) in new[] { ("ONE", 2), ("TWO", 2), ("LOW", 1) })
                {
                    await js.CreateStreamAsync(new StreamConfig(stream, [$"{stream.ToLowerInvariant()}.>"]) { MaxConsumers = stream == "LOW" ? 1 : -1 }, cts.Token);
                    for (var i = 0; i < allowed; i++)
                    {
                        await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig($"C{i}") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
                    }

                    var beyond = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                        await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("EXTRA") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token));
                    Assert.Equal((400, 10026), (beyond.Error.Code, beyond.Error.ErrCode));
                }

                Assert.Equal(2, (await js.GetAccountInfoAsync(cts.Token)).Limits.MaxConsumers);
            },
            Config);

    [Fact]
    public Task An_account_without_jetstream_is_told_so() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await using var n = await AccountConfig.ConnectAsync(server.Url, "n");
                var js = new NatsJSContext(n);
                var e = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetAccountInfoAsync(cts.Token));
                Assert.Equal(10039, e.Error.ErrCode);
                Assert.Equal("JetStream not enabled for account", e.Error.Description);
            },
            Config);
}

[Trait("server", "nats-server")]
public sealed class AccountJetStreamTests_NatsServer(NatsServerFixture server) : AccountJetStreamTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class AccountJetStreamTests_Courier(CourierFixture server) : AccountJetStreamTests<CourierFixture>(server);
