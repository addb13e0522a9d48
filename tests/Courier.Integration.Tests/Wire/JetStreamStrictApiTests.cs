using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// nats-server 2.12's strict JetStream API (<c>jetstream.strict</c>, on by default), which 2.9.10 lacks, so
/// Courier only, following jetstream_api.go: a stream or consumer field Courier does not implement is refused
/// (unknown ones with <c>invalid JSON: json: unknown field "…"</c>, as unmarshalRequest's DisallowUnknownFields
/// answers), never stored and echoed (PAUSE, RESET and priority groups are built: ConsumerPauseTests,
/// ConsumerResetTests, PriorityGroupTests).
/// </summary>
[Trait("server", "courier")]
public sealed class JetStreamStrictApiTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    [Theory]
    [InlineData("allow_atomic", "true")]
    [InlineData("allow_msg_schedules", "true")]
    public async Task Stream_fields_courier_does_not_know_are_refused_on_create_and_update_not_echoed(string field, string value)
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (var refused = await RequestAsync(c, "$JS.API.STREAM.CREATE.S", $$"""{"name":"S","subjects":["s.>"],"storage":"memory","{{field}}":{{value}}}"""))
            {
                AssertError(refused, "io.nats.jetstream.api.v1.stream_create_response", 400, 10025, $"invalid JSON: json: unknown field \"{field}\"");
            }

            using (var missing = await RequestAsync(c, "$JS.API.STREAM.INFO.S", ""))
            {
                Assert.Equal(10059, missing.RootElement.GetProperty("error").GetProperty("err_code").GetInt32());
            }

            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var refused = await RequestAsync(c, "$JS.API.STREAM.UPDATE.S", $$"""{"name":"S","subjects":["s.>"],"storage":"memory","{{field}}":{{value}}}"""))
            {
                AssertError(refused, "io.nats.jetstream.api.v1.stream_update_response", 400, 10025, $"invalid JSON: json: unknown field \"{field}\"");
            }

            using var info = await RequestAsync(c, "$JS.API.STREAM.INFO.S", "");
            Assert.False(info.RootElement.GetProperty("config").TryGetProperty(field, out _));
        });
    }

    [Theory]
    [InlineData(""" "compression":"s2" """, 500, 10052, "stream compression \"s2\" is not supported")]
    [InlineData(""" "consumer_limits":{"inactive_threshold":1000000000} """, 500, 10052, "stream consumer limits are not supported")]
    [InlineData(""" "consumer_limits":{"max_ack_pending":10} """, 500, 10052, "stream consumer limits are not supported")]
    [InlineData(""" "num_replicas":3 """, 500, 10074, "replicas > 1 not supported in non-clustered mode")]
    [InlineData(""" "num_replicas":7 """, 500, 10052, "maximum replicas is 5")] // nats-server 2.9.10 answers this before the cluster question
    public async Task Stream_settings_courier_does_not_apply_are_refused(string setting, int status, int code, string description)
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (var refused = await RequestAsync(c, "$JS.API.STREAM.CREATE.S", $$"""{"name":"S","subjects":["s.>"],"storage":"memory",{{setting}}}"""))
            {
                AssertError(refused, "io.nats.jetstream.api.v1.stream_create_response", status, code, description);
            }

            // Their defaults ask for nothing and are accepted (nats.go always sends compression and consumer_limits).
            using var created = await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory","compression":"none","consumer_limits":{},"num_replicas":1}""");
            Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
            using var refusedUpdate = await RequestAsync(c, "$JS.API.STREAM.UPDATE.S", $$"""{"name":"S","subjects":["s.>"],"storage":"memory",{{setting}}}""");
            AssertError(refusedUpdate, "io.nats.jetstream.api.v1.stream_update_response", status, code, description);
        });
    }

    [Theory]
    [InlineData("direct", "true")] // nats-server's internal consumers of sources and mirrors; Courier has none
    [InlineData("sourcing", "true")]
    public async Task Consumer_fields_courier_does_not_know_are_refused(string field, string value)
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var refused = await RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", $$$"""{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","{{{field}}}":{{{value}}}}}"""))
            {
                AssertError(refused, "io.nats.jetstream.api.v1.consumer_create_response", 400, 10025, $"invalid JSON: json: unknown field \"{field}\"");
            }

            // An unknown field of the request itself, beside the config, too.
            using (var refused = await RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit"},"pedantic":true}"""))
            {
                AssertError(refused, "io.nats.jetstream.api.v1.consumer_create_response", 400, 10025, "invalid JSON: json: unknown field \"pedantic\"");
            }

            using var names = await RequestAsync(c, "$JS.API.CONSUMER.NAMES.S", "");
            Assert.Equal(0, names.RootElement.GetProperty("total").GetInt32());
        });
    }

    [Fact]
    public async Task An_instant_consumer_updated_to_replay_original_is_refused_as_a_changed_replay_policy()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","replay_policy":"instant"}}""")) { }
            using var update = await RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","replay_policy":"original"}}""");
            AssertError(update, "io.nats.jetstream.api.v1.consumer_create_response", 500, 10012, "replay policy can not be updated");
        });
    }

    internal static void AssertError(JsonDocument reply, string type, int status, int code, string description)
    {
        var error = reply.RootElement.GetProperty("error");
        Assert.Equal((type, status, code, description), (reply.RootElement.GetProperty("type").GetString(), error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
    }

    private static Task<WireClient> ConnectAsync(ServerProcess server) => JetStreamApiWire.ConnectAsync(server);

    private static Task<JsonDocument> RequestAsync(WireClient c, string subject, string body) => JetStreamApiWire.RequestAsync(c, subject, body);
}
