using System.Net;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /healthz's query options of nats-server 2.9, differential against nats-server 2.9.10: <c>js-enabled</c>,
/// <c>js-enabled-only</c> and <c>js-server-only</c> are Go booleans (a value Go cannot parse is a
/// 400 with Go's message, the first bad one in that order). With JetStream off every option answers ok
/// too. The options 2.10 added (<c>account</c>, <c>stream</c>, <c>consumer</c>, <c>details</c>), which
/// 2.9.10 ignores, are <see cref="HealthzAssetTests"/>'.
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
        // With an existing stream and consumer (2.10.22 answers these alike).
        "details=true",
        "account=$G&stream=ORDERS&consumer=C1",
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
        ("account=$G&stream=MISSING&js-server-only=nope", """Error decoding boolean for 'js-server-only': strconv.ParseBool: parsing "nope": invalid syntax"""),
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
    public Task With_jetstream_an_existing_stream_and_consumer_answer_ok_and_a_bad_boolean_is_a_400() =>
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

/// <summary>
/// /healthz's options of nats-server 2.10 (Courier-only: 2.9.10 ignores them), as 2.10.22's healthz: a stream
/// needs an account and a consumer a stream (400, whether JetStream is on or not); <c>details</c> is a Go
/// boolean; an account, stream or consumer that is not here is a 404 with nats-server's words, listed
/// under <c>errors</c> with <c>details</c>; a single server checks its assets even with <c>js-server-only</c>;
/// and HEALTHZ system requests take the same options and keep <c>status_code</c>.
/// </summary>
[Trait("server", "courier")]
public sealed class HealthzAssetTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    private static readonly (string Query, HttpStatusCode Status, string Body)[] WithoutJetStream =
    [
        ("details=true", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("account=NOPE", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("stream=ORDERS", HttpStatusCode.BadRequest, """{"status":"error","error":"\"account\" must not be empty when checking stream health"}"""),
        ("consumer=C1", HttpStatusCode.BadRequest, """{"status":"error","error":"\"stream\" must not be empty when checking consumer health"}"""),
        ("stream=ORDERS&details=true", HttpStatusCode.BadRequest, """{"status":"error","errors":[{"type":"BAD_REQUEST","error":"\"account\" must not be empty when checking stream health"}]}"""),
        ("details=nope", HttpStatusCode.BadRequest, """Error decoding boolean for 'details': strconv.ParseBool: parsing "nope": invalid syntax"""),
    ];

    private static readonly (string Query, HttpStatusCode Status, string Body)[] WithJetStream =
    [
        ("account=$G", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("account=$G&stream=ORDERS", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("account=$G&stream=ORDERS&consumer=C1&details=true", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("account=NOPE", HttpStatusCode.NotFound, """{"status":"unavailable","error":"JetStream account \"NOPE\" not found"}"""),
        ("account=$G&stream=MISSING", HttpStatusCode.NotFound, """{"status":"unavailable","error":"JetStream stream \"MISSING\" not found on account \"$G\""}"""),
        ("account=$G&stream=ORDERS&consumer=MISSING", HttpStatusCode.NotFound, """{"status":"unavailable","error":"JetStream consumer \"MISSING\" not found for stream \"ORDERS\" on account \"$G\""}"""),
        ("account=$G&stream=MISSING&details=true", HttpStatusCode.NotFound, """{"status":"error","errors":[{"type":"STREAM","account":"$G","stream":"MISSING","error":"JetStream stream \"MISSING\" not found on account \"$G\""}]}"""),
        ("account=$G&stream=MEMORY", HttpStatusCode.NotFound, """{"status":"unavailable","error":"JetStream stream \"MEMORY\" not found on account \"$G\""}"""), // no directory, as nats-server
        ("js-enabled-only=true&account=NOPE", HttpStatusCode.OK, """{"status":"ok"}"""),
        ("js-server-only=true&account=NOPE", HttpStatusCode.NotFound, """{"status":"unavailable","error":"JetStream account \"NOPE\" not found"}"""),
        ("consumer=C1", HttpStatusCode.BadRequest, """{"status":"error","error":"\"stream\" must not be empty when checking consumer health"}"""),
    ];

    [Fact]
    public async Task Without_jetstream_only_the_option_rules_fail()
    {
        using var monitor = new MonitorClient(fixture.Server);
        await AssertAnswersAsync(monitor, WithoutJetStream);
    }

    [Fact]
    public Task With_jetstream_a_missing_account_stream_or_consumer_is_a_404_in_nats_servers_words() =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            await using var nats = await NatsNetClient.ConnectAsync(server.Url);
            var js = new NatsJSContext(nats);
            await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);
            await js.CreateStreamAsync(new StreamConfig("MEMORY", ["memory.>"]) { Storage = StreamConfigStorage.Memory }, cts.Token);
            await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);

            using var monitor = new MonitorClient(server);
            await AssertAnswersAsync(monitor, WithJetStream);
        });

    [Fact]
    public Task A_healthz_system_request_takes_the_options_and_keeps_the_status_code() =>
        fixture.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await using (var nats = await ConnectAsync(server, "app"))
                {
                    await new NatsJSContext(nats).CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);
                }

                await using var sys = await ConnectAsync(server, "sys");
                var id = (await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.VARZ")).GetProperty("server").GetProperty("id").GetString();
                var ok = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{id}.HEALTHZ", """{"account":"APP","stream":"ORDERS"}""")).GetProperty("data");
                Assert.Equal(Normalized("""{"status":"ok","status_code":200}"""), Normalized(ok.GetRawText()));
                var missing = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{id}.HEALTHZ", """{"account":"APP","stream":"GONE","details":true}""")).GetProperty("data");
                Assert.Equal(
                    Normalized("""{"status":"error","status_code":404,"errors":[{"type":"STREAM","account":"APP","stream":"GONE","error":"JetStream stream \"GONE\" not found on account \"APP\""}]}"""),
                    Normalized(missing.GetRawText()));
            },
            """
            accounts {
              APP { jetstream: enabled, users: [{user: app, password: app}] }
              SYS { users: [{user: sys, password: sys}] }
            }
            system_account: SYS
            """);

    // JSON alike whatever the whitespace and escapes (Go writes \" where System.Text.Json writes \u0022), in its order; other text as it is.
    private static string Normalized(string body) =>
        body.StartsWith('{') ? System.Text.Json.Nodes.JsonNode.Parse(body)!.ToJsonString() : body;

    private static async Task<NatsConnection> ConnectAsync(ServerProcess server, string user)
    {
        var nats = new NatsConnection(new NatsOpts { Url = server.Url, Name = "healthz-it", AuthOpts = new NatsAuthOpts { Username = user, Password = user }, MaxReconnectRetry = 0 });
        await nats.ConnectAsync();
        return nats;
    }

    private static async Task AssertAnswersAsync(MonitorClient monitor, (string Query, HttpStatusCode Status, string Body)[] cases)
    {
        foreach (var (query, expectedStatus, expectedBody) in cases)
        {
            var (status, body, _) = await monitor.GetAsync("/healthz?" + query);
            Assert.True(status == expectedStatus && Normalized(body) == Normalized(expectedBody), $"?{query}: {(int)status} {body}");
            Assert.DoesNotContain('\n', body.TrimEnd()); // one line, as Go's json.Marshal
        }
    }
}
