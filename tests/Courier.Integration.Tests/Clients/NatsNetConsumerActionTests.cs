using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using static Courier.Integration.Tests.Clients.StreamCopies;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// A consumer create's <c>action</c>, through NATS.Net: <c>CreateConsumerAsync</c> sends "create",
/// <c>UpdateConsumerAsync</c> "update", <c>CreateOrUpdateConsumerAsync</c> none. Courier only: the field
/// is nats-server 2.10's, and the reference server here is 2.9.10, which ignores it; these cases follow
/// 2.10's consumer.go (addConsumerWithAssignment) and jetstream_api.go (jsConsumerCreateRequest).
/// </summary>
[Trait("server", "courier")]
public sealed class NatsNetConsumerActionTests(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public Task CreateConsumerAsync_returns_an_existing_consumer_with_the_same_config_and_refuses_one_with_another_as_already_existing() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var config = new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "first" };
            var created = await js.CreateConsumerAsync(name, config, ct);

            // The same configuration again (its defaults not sent, as the first time): the consumer that exists.
            var again = await js.CreateConsumerAsync(name, new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "first" }, ct);
            Assert.Equal(created.Info.Created, again.Info.Created);

            var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.CreateConsumerAsync(name, new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "second" }, ct));
            Assert.Equal((400, 10148, "consumer already exists"), (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));

            var kept = await js.GetConsumerAsync(name, "worker", ct);
            Assert.Equal("first", kept.Info.Config.Description);
            Assert.Equal(created.Info.Created, kept.Info.Created);
        });

    [Fact]
    public Task UpdateConsumerAsync_of_a_consumer_that_does_not_exist_is_refused_and_creates_nothing() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);

            var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.UpdateConsumerAsync(name, new ConsumerConfig("missing") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct));
            Assert.Equal((400, 10149, "consumer does not exist"), (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));
            Assert.Empty(await ConsumerNamesAsync(js, name, ct));

            // Once it exists, an update naming it is answered with it.
            var created = await js.CreateConsumerAsync(name, new ConsumerConfig("missing") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            var updated = await js.UpdateConsumerAsync(name, new ConsumerConfig("missing") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            Assert.Equal(created.Info.Created, updated.Info.Created);
        });

    [Fact]
    public Task CreateOrUpdateConsumerAsync_sends_no_action_and_creates_a_consumer_then_answers_with_it() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);

            var created = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("either") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            var again = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("either") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            Assert.Equal("either", again.Info.Name);
            Assert.Equal(created.Info.Created, again.Info.Created);
            Assert.Equal(["either"], await ConsumerNamesAsync(js, name, ct));
        });

    [Fact]
    public Task An_unknown_action_is_invalid_json_and_the_known_ones_are_exact() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig("A", [$"{p}.>"]), ct);

            async Task<JsonElement> CreateAsync(string subject, string config, string action)
            {
                using var reply = await RequestAsync(nats, $"$JS.API.CONSUMER.{subject}", $$"""{"stream_name":"A","config":{{config}}{{action}}}""", ct);
                return reply.RootElement.Clone();
            }

            static (int, int) Error(JsonElement reply) =>
                reply.TryGetProperty("error", out var error) ? (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32()) : (0, 0);

            // nats-server's UnmarshalJSON takes "", "create" and "update", exactly: anything else, null too, is invalid JSON.
            const string Durable = """{"durable_name":"D","ack_policy":"explicit","metadata":{"a":"1","b":"2"}}""";
            foreach (var unknown in new[] { "\"upsert\"", "\"Create\"", "\"CREATE\"", "null", "1" })
            {
                var reply = await CreateAsync("CREATE.A.D", Durable, $",\"action\":{unknown}");
                Assert.Equal((400, 10025), Error(reply));
                Assert.Equal("io.nats.jetstream.api.v1.consumer_create_response", reply.GetProperty("type").GetString());
            }

            Assert.Empty(await ConsumerNamesAsync(js, "A", ct));

            // "" is create-or-update. A durable made through DURABLE.CREATE and created again through CONSUMER.CREATE
            // is the same consumer (only there does config.name get set), and metadata in another order is the same metadata.
            Assert.Equal((0, 0), Error(await CreateAsync("DURABLE.CREATE.A.D", Durable, ",\"action\":\"\"")));
            Assert.Equal((0, 0), Error(await CreateAsync("CREATE.A.D", """{"durable_name":"D","ack_policy":"explicit","metadata":{"b":"2","a":"1"}}""", ",\"action\":\"create\"")));
            Assert.Equal((400, 10148), Error(await CreateAsync("CREATE.A.D", """{"durable_name":"D","ack_policy":"explicit","metadata":{"a":"1"}}""", ",\"action\":\"create\"")));
            Assert.Equal((400, 10149), Error(await CreateAsync("CREATE.A", """{"ack_policy":"explicit"}""", ",\"action\":\"update\"")));
            Assert.Equal(["D"], await ConsumerNamesAsync(js, "A", ct));
        });

    private static async Task<List<string>> ConsumerNamesAsync(NatsJSContext js, string stream, CancellationToken ct)
    {
        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync(stream, ct))
        {
            names.Add(name);
        }

        return names;
    }

    private Task WithJetStreamAsync(Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(server, test);
}
