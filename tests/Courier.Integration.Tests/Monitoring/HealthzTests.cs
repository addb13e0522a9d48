using System.Net;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /healthz's query options, differential against nats-server 2.9.10: <c>js-enabled</c>,
/// <c>js-enabled-only</c> and <c>js-server-only</c> are Go booleans (a value Go cannot parse is a
/// 400 with Go's message, the first bad one in that order); <c>account</c>, <c>stream</c>,
/// <c>consumer</c> and <c>details</c> came with 2.10 and 2.9.10 ignores them, so an existing and a
/// missing stream or consumer both answer ok. With JetStream off every option answers ok too.
/// </summary>
public abstract class HealthzTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Ok = """{"status":"ok"}""";

    // The queries whose answer is ok whether JetStream is on or off.
    private static readonly string[] OkQueries =
    [
        "",
        "js-enabled-only=true",
        "js-enabled-only=1",
        "js-enabled-only=false",
        "js-enabled=true",
        "js-enabled=T",
        "js-server-only=true",
        "js-server-only=TRUE",
        "js-enabled-only=true&js-server-only=true",
        "js-enabled-only=",
        // Go's url.Values.Get takes the first of a repeated parameter.
        "js-enabled-only=true&js-enabled-only=nope",
        // Options of 2.10 and later: ignored by 2.9.10.
        "details=true",
        "details=nope",
        "account=NOPE",
        "stream=ORDERS",
        "stream=MISSING",
        "stream=ORDERS&consumer=C1",
        "stream=ORDERS&consumer=MISSING",
        "stream=MISSING&consumer=MISSING",
        "consumer=C1",
        "account=$G&stream=ORDERS&consumer=C1",
        "account=$G&stream=MISSING&details=true",
        "js-enabled-only=true&stream=MISSING",
        "js-server-only=true&stream=ORDERS&consumer=MISSING",
    ];

    // The queries Go cannot decode: the parameter named is the first bad one of js-enabled,
    // js-enabled-only, js-server-only.
    private static readonly (string Query, string Body)[] BadQueries =
    [
        ("js-enabled-only=yes", """Error decoding boolean for 'js-enabled-only': strconv.ParseBool: parsing "yes": invalid syntax"""),
        ("js-enabled=on", """Error decoding boolean for 'js-enabled': strconv.ParseBool: parsing "on": invalid syntax"""),
        ("js-server-only=2", """Error decoding boolean for 'js-server-only': strconv.ParseBool: parsing "2": invalid syntax"""),
        ("js-server-only=x&js-enabled-only=y&js-enabled=z", """Error decoding boolean for 'js-enabled': strconv.ParseBool: parsing "z": invalid syntax"""),
        ("js-server-only=x&js-enabled-only=y", """Error decoding boolean for 'js-enabled-only': strconv.ParseBool: parsing "y": invalid syntax"""),
        ("stream=MISSING&js-server-only=nope", """Error decoding boolean for 'js-server-only': strconv.ParseBool: parsing "nope": invalid syntax"""),
    ];

    private readonly TServer _server;

    protected HealthzTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Without_jetstream_every_option_answers_ok_and_a_bad_boolean_is_a_400()
    {
        using var monitor = new MonitorClient(_server.Server);
        await AssertAnswersAsync(monitor);
    }

    [Fact]
    public Task With_jetstream_an_existing_or_missing_stream_or_consumer_answers_ok_and_a_bad_boolean_is_a_400() =>
        _server.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            await using (var nats = await NatsNetClient.ConnectAsync(server.Url))
            {
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);
                await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            }

            using var monitor = new MonitorClient(server);
            await AssertAnswersAsync(monitor);
        });

    private static async Task AssertAnswersAsync(MonitorClient monitor)
    {
        foreach (var query in OkQueries)
        {
            var (status, body, contentType) = await monitor.GetAsync("/healthz?" + query);
            Assert.True(status == HttpStatusCode.OK && body == Ok, $"?{query}: {(int)status} {body}");
            Assert.Equal("application/json", contentType);
        }

        foreach (var (query, expected) in BadQueries)
        {
            var (status, body, contentType) = await monitor.GetAsync("/healthz?" + query);
            Assert.True(status == HttpStatusCode.BadRequest && body == expected, $"?{query}: {(int)status} {body}");
            Assert.Equal("text/plain", contentType);
        }
    }
}

[Trait("server", "nats-server")]
public sealed class HealthzTests_NatsServer(NatsServerFixture server) : HealthzTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class HealthzTests_Courier(CourierFixture server) : HealthzTests<CourierFixture>(server);
