using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Features;

/// <summary>
/// Priority groups of pull consumers (nats-server 2.11/2.12, ADR-42: <c>priority_groups</c>, <c>priority_policy</c>,
/// <c>priority_timeout</c>, the pull request's group fields, <c>$JS.API.CONSUMER.UNPIN</c>, the pinned / unpinned
/// advisories), which nats-server 2.9.10 lacks, so Courier only: through NATS.Net 3.3.2's priority group options,
/// and raw transcripts for nats-server's errors, statuses and advisories.
/// </summary>
[Trait("server", "courier")]
public sealed class PriorityGroupTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    private const string Group = "jobs";

    [Fact]
    public Task Overflow_pull_requests_with_min_pending_or_min_ack_pending_wait_until_the_consumer_is_that_far_behind() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("C")
            {
                AckPolicy = ConsumerConfigAckPolicy.Explicit,
                PriorityGroups = [Group],
                PriorityPolicy = ConsumerConfigPriorityPolicy.Overflow,
            }, ct);
            Assert.Equal(ConsumerConfigPriorityPolicy.Overflow, consumer.Info.Config.PriorityPolicy);
            Assert.Equal(new[] { Group }, consumer.Info.Config.PriorityGroups!);

            for (var i = 0; i < 2; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            // Two pending, at least five asked for: the request waits, and expires with nothing.
            var overflow = new NatsJSPriorityGroupOpts { Group = Group, MinPending = 5 };
            Assert.Empty(await FetchAsync(consumer, overflow, 1, TimeSpan.FromSeconds(1), ct));

            for (var i = 2; i < 6; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            // Six pending now: served (and left unacknowledged).
            Assert.Equal([0], (await FetchAsync(consumer, overflow, 1, TimeSpan.FromSeconds(10), ct, ack: false)).ConvertAll(m => m.Data));

            // One delivery waits for its ack: min_ack_pending 2 waits, 1 is served.
            Assert.Empty(await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = Group, MinAckPending = 2 }, 1, TimeSpan.FromSeconds(1), ct));
            var served = await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = Group, MinAckPending = 1 }, 1, TimeSpan.FromSeconds(10), ct);
            Assert.Equal([1], served.ConvertAll(m => m.Data));

            // Without thresholds a request of the group is served at once.
            Assert.Equal([2], (await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = Group }, 1, TimeSpan.FromSeconds(10), ct)).ConvertAll(m => m.Data));
        });

    [Fact]
    public Task Pinned_client_gets_every_message_until_unpinned_then_the_other_client_is_pinned() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            await js.CreateOrUpdateConsumerAsync(stream, PinnedConfig(TimeSpan.FromMinutes(1)), ct);
            await using var pinnedAdvisories = await nats.SubscribeCoreAsync<byte[]>($"$JS.EVENT.ADVISORY.CONSUMER.PINNED.{stream}.C", cancellationToken: ct);
            await using var unpinnedAdvisories = await nats.SubscribeCoreAsync<byte[]>($"$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.{stream}.C", cancellationToken: ct);
            await nats.PingAsync(ct);

            // Two clients, each on its own connection, consume the same group.
            await using var otherConnection = await NatsNetClient.ConnectAsync(nats.Opts.Url, "natsnet-it-other");
            var clients = new[] { await js.GetConsumerAsync(stream, "C", ct), await new NatsJSContext(otherConnection).GetConsumerAsync(stream, "C", ct) };
            var received = new[] { Channel.CreateUnbounded<INatsJSMsg<int>>(), Channel.CreateUnbounded<INatsJSMsg<int>>() };
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
            var consuming = Enumerable.Range(0, 2).Select(i => Task.Run(async () =>
            {
                try
                {
                    await foreach (var msg in clients[i].ConsumeAsync<int>(opts: new NatsJSConsumeOpts { MaxMsgs = 100, PriorityGroup = new NatsJSPriorityGroupOpts { Group = Group } }, cancellationToken: stop.Token))
                    {
                        await msg.AckAsync(cancellationToken: stop.Token);
                        await received[i].Writer.WriteAsync(msg, stop.Token);
                    }
                }
                catch (OperationCanceledException)
                {
                }
            })).ToArray();

            // Both have asked (two waiting requests) before anything is published.
            await WaitForAsync(async () => (await js.GetConsumerAsync(stream, "C", ct)).Info.NumWaiting >= 2, ct);
            for (var i = 0; i < 10; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            var (pinned, first) = await TakeFromOneAsync(received, 10, ct);
            var pinId = PinOf(first[0]);
            Assert.False(string.IsNullOrEmpty(pinId));
            Assert.All(first, m => Assert.Equal(pinId, PinOf(m)));
            Assert.Equal(Enumerable.Range(0, 10), first.ConvertAll(m => m.Data));

            var advisory = await NatsJson.NextAsync(pinnedAdvisories, ct);
            Assert.Equal("io.nats.jetstream.advisory.v1.consumer_group_pinned", advisory.GetProperty("type").GetString());
            Assert.Equal((stream, "C", Group, pinId), (advisory.GetProperty("stream").GetString(), advisory.GetProperty("consumer").GetString(), advisory.GetProperty("group").GetString(), advisory.GetProperty("pinned_id").GetString()));

            var info = (await js.GetConsumerAsync(stream, "C", ct)).Info;
            var state = Assert.Single(info.PriorityGroups!);
            Assert.Equal((Group, pinId), (state.Group, state.PinnedClientId));
            Assert.True(state.PinnedTs > DateTimeOffset.UtcNow.AddMinutes(-1));

            // Unpinned through the API: the other client (whose request waited without an id) is pinned next.
            await clients[pinned].UnpinAsync(Group, ct);
            var unpinned = await NatsJson.NextAsync(unpinnedAdvisories, ct);
            Assert.Equal("io.nats.jetstream.advisory.v1.consumer_group_unpinned", unpinned.GetProperty("type").GetString());
            Assert.Equal((Group, "admin"), (unpinned.GetProperty("group").GetString(), unpinned.GetProperty("reason").GetString()));

            for (var i = 10; i < 20; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            var (repinned, second) = await TakeFromOneAsync(received, 10, ct);
            Assert.Equal(1 - pinned, repinned);
            Assert.Equal(Enumerable.Range(10, 10), second.ConvertAll(m => m.Data));
            var newPinId = PinOf(second[0]);
            Assert.False(string.IsNullOrEmpty(newPinId));
            Assert.NotEqual(pinId, newPinId);
            Assert.Equal(newPinId, (await NatsJson.NextAsync(pinnedAdvisories, ct)).GetProperty("pinned_id").GetString());
            Assert.Equal(newPinId, Assert.Single((await js.GetConsumerAsync(stream, "C", ct)).Info.PriorityGroups!).PinnedClientId);

            await stop.CancelAsync();
            await Task.WhenAll(consuming);
        });

    [Fact]
    public Task A_pin_expires_after_priority_timeout_without_pull_requests_from_its_client_and_the_next_client_is_pinned() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            await js.CreateOrUpdateConsumerAsync(stream, PinnedConfig(TimeSpan.FromSeconds(1)), ct);
            await using var unpinnedAdvisories = await nats.SubscribeCoreAsync<byte[]>($"$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.{stream}.C", cancellationToken: ct);
            await nats.PingAsync(ct);
            await js.PublishAsync($"{p}.x", 1, cancellationToken: ct);

            // NATS.Net allows only Consume with pinned_client (its Fetch and Next refuse the policy).
            var consumeOpts = new NatsJSConsumeOpts { MaxMsgs = 100, PriorityGroup = new NatsJSPriorityGroupOpts { Group = Group } };
            var first = await js.GetConsumerAsync(stream, "C", ct);
            INatsJSMsg<int> firstGot;
            using (var stopFirst = CancellationTokenSource.CreateLinkedTokenSource(ct))
            {
                await using var messages = first.ConsumeAsync<int>(opts: consumeOpts, cancellationToken: stopFirst.Token).GetAsyncEnumerator(stopFirst.Token);
                Assert.True(await messages.MoveNextAsync());
                firstGot = messages.Current;
                await firstGot.AckAsync(cancellationToken: ct);
                await stopFirst.CancelAsync(); // the first client stops asking
            }

            Assert.Equal(1, firstGot.Data);
            var firstPin = PinOf(firstGot);
            Assert.False(string.IsNullOrEmpty(firstPin));

            // Another client asks without an id: it waits while the pin holds, and gets message 2 once the first
            // client, which asks no more, has lost its pin (priority_timeout 1 s).
            await js.PublishAsync($"{p}.x", 2, cancellationToken: ct);
            await using var otherConnection = await NatsNetClient.ConnectAsync(nats.Opts.Url, "natsnet-it-other");
            var second = await new NatsJSContext(otherConnection).GetConsumerAsync(stream, "C", ct);
            INatsJSMsg<int> secondGot;
            using (var stopSecond = CancellationTokenSource.CreateLinkedTokenSource(ct))
            {
                await using var messages = second.ConsumeAsync<int>(opts: consumeOpts, cancellationToken: stopSecond.Token).GetAsyncEnumerator(stopSecond.Token);
                Assert.True(await messages.MoveNextAsync());
                secondGot = messages.Current;
                await secondGot.AckAsync(cancellationToken: ct);
                await stopSecond.CancelAsync();
            }

            Assert.Equal(2, secondGot.Data);
            var secondPin = PinOf(secondGot);
            Assert.False(string.IsNullOrEmpty(secondPin));
            Assert.NotEqual(firstPin, secondPin);

            var timeout = await NatsJson.NextAsync(unpinnedAdvisories, ct);
            Assert.Equal((Group, "timeout"), (timeout.GetProperty("group").GetString(), timeout.GetProperty("reason").GetString()));
        });

    [Fact]
    public Task A_durable_keeps_its_priority_configuration_across_a_restart_but_not_its_pin() =>
        NatsNetClient.AcrossRestartAsync(
            fixture,
            async (nats, js, p, ct) =>
            {
                var stream = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
                var consumer = await js.CreateOrUpdateConsumerAsync(stream, PinnedConfig(TimeSpan.FromMinutes(5), "D"), ct);
                await js.PublishAsync($"{p}.x", 1, cancellationToken: ct);
                using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
                await using (var messages = consumer.ConsumeAsync<int>(opts: new NatsJSConsumeOpts { MaxMsgs = 100, PriorityGroup = new NatsJSPriorityGroupOpts { Group = Group } }, cancellationToken: stop.Token).GetAsyncEnumerator(stop.Token))
                {
                    Assert.True(await messages.MoveNextAsync());
                    await messages.Current.AckAsync(cancellationToken: ct);
                    await stop.CancelAsync();
                }

                await consumer.RefreshAsync(ct);
                Assert.False(string.IsNullOrEmpty(Assert.Single(consumer.Info.PriorityGroups!).PinnedClientId));
            },
            async (nats, js, p, ct) =>
            {
                // As nats-server, the pin lives in the (leader's) memory only: the consumer starts unpinned.
                var consumer = await js.GetConsumerAsync(NatsNetClient.NameFor(p), "D", ct);
                Assert.Equal(ConsumerConfigPriorityPolicy.PinnedClient, consumer.Info.Config.PriorityPolicy);
                Assert.Equal(TimeSpan.FromMinutes(5), consumer.Info.Config.PinnedTTL);
                Assert.Equal(new[] { Group }, consumer.Info.Config.PriorityGroups!);
                var state = Assert.Single(consumer.Info.PriorityGroups!);
                Assert.Equal(Group, state.Group);
                Assert.Null(state.PinnedClientId);
            });

    [Theory]
    [InlineData(""" "deliver_subject":"d.x","priority_policy":"pinned_client","priority_groups":["jobs"] """, 10178, "priority groups can not be used with push consumers")]
    [InlineData(""" "priority_policy":"overflow" """, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set")]
    [InlineData(""" "priority_policy":"overflow","priority_groups":[] """, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set")]
    [InlineData(""" "priority_policy":"overflow","priority_groups":[""] """, 10161, "Group name cannot be an empty string")]
    [InlineData(""" "priority_policy":"overflow","priority_groups":["no spaces"] """, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters")]
    [InlineData(""" "priority_policy":"overflow","priority_groups":["seventeen-chars-x"] """, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters")]
    [InlineData(""" "priority_groups":["jobs"] """, 10196, "consumer can not have priority groups when policy is none")]
    [InlineData(""" "priority_policy":"none","priority_timeout":1000000000 """, 10197, "PinnedTTL cannot be set when PriorityPolicy is none")]
    [InlineData(""" "priority_policy":"fastest","priority_groups":["jobs"] """, 10025, "invalid JSON: unknown priority policy: \"fastest\"")]
    public async Task Priority_configurations_nats_server_refuses_are_refused_with_its_errors(string fields, int code, string description)
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var refused = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", $$$"""{"stream_name":"S","config":{"name":"C","ack_policy":"explicit",{{{fields}}}}}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(refused, "io.nats.jetstream.api.v1.consumer_create_response", 400, code, description);
            }

            using var names = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.NAMES.S", "");
            Assert.Equal(0, names.RootElement.GetProperty("total").GetInt32());
        });
    }

    [Fact]
    public async Task A_pinned_client_consumer_gets_the_default_timeout_shows_its_groups_in_info_and_may_change_its_policy()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var created = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","priority_groups":["jobs"],"priority_policy":"pinned_client"}}"""))
            {
                var config = created.RootElement.GetProperty("config");
                Assert.Equal("pinned_client", config.GetProperty("priority_policy").GetString());
                Assert.Equal(120_000_000_000, config.GetProperty("priority_timeout").GetInt64()); // nats-server's JsDefaultPinnedTTL
                Assert.Equal("""[{"group":"jobs","pinned_ts":"0001-01-01T00:00:00Z"}]""", created.RootElement.GetProperty("priority_groups").GetRawText());
            }

            // Every priority field may change on update (nats-server's checkNewConsumerConfig names none of them).
            using (var updated = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","priority_groups":["other"],"priority_policy":"overflow"}}"""))
            {
                Assert.False(updated.RootElement.TryGetProperty("error", out _), updated.RootElement.ToString());
                Assert.Equal("overflow", updated.RootElement.GetProperty("config").GetProperty("priority_policy").GetString());
                Assert.False(updated.RootElement.GetProperty("config").TryGetProperty("priority_timeout", out _));
            }

            // A consumer without groups has no priority_groups in its info, and no priority fields in its config.
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.N", """{"stream_name":"S","config":{"name":"N","ack_policy":"explicit","priority_policy":"none"}}""")) { }
            using var plain = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.S.N", "");
            Assert.False(plain.RootElement.TryGetProperty("priority_groups", out _));
            Assert.False(plain.RootElement.GetProperty("config").TryGetProperty("priority_policy", out _));
        });
    }

    [Fact]
    public async Task Pull_requests_get_nats_servers_statuses_for_missing_unknown_or_mismatched_priority_fields()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","priority_groups":["jobs"],"priority_policy":"pinned_client"}}""")) { }
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.O", """{"stream_name":"S","config":{"name":"O","ack_policy":"explicit","priority_groups":["jobs"],"priority_policy":"overflow"}}""")) { }
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.N", """{"stream_name":"S","config":{"name":"N","ack_policy":"explicit"}}""")) { }

            await using var puller = await WireClient.ConnectAsync(server);
            await puller.HandshakeAsync();
            await puller.SendAsync("SUB pull.1 1\r\n");
            await puller.PingPongAsync();

            Assert.Equal("NATS/1.0 400 Bad Request - Priority Group missing\r\n\r\n", (await PullAsync(puller, "P", """{"batch":1,"expires":5000000000}""")).HeaderText);
            Assert.Equal("NATS/1.0 400 Bad Request - Invalid Priority Group\r\n\r\n", (await PullAsync(puller, "P", """{"batch":1,"group":"other"}""")).HeaderText);
            Assert.Equal("NATS/1.0 400 Bad Request - Not a Overflow Priority consumer\r\n\r\n", (await PullAsync(puller, "P", """{"batch":1,"group":"jobs","min_pending":5}""")).HeaderText);
            Assert.Equal("NATS/1.0 400 Bad Request - Not a Pinned Client Priority consumer\r\n\r\n", (await PullAsync(puller, "O", """{"batch":1,"group":"jobs","id":"abc"}""")).HeaderText);
            Assert.Equal("NATS/1.0 400 Bad Request - Priority must be between 0 and 9\r\n\r\n", (await PullAsync(puller, "N", """{"batch":1,"priority":10}""")).HeaderText);

            // Pinned by the first request a message comes for; a request with another id is refused at once.
            await puller.SendAsync("PUB s.a 5\r\nfirst\r\n");
            var delivered = await PullAsync(puller, "P", """{"batch":1,"expires":5000000000,"group":"jobs"}""");
            Assert.Equal("first", delivered.PayloadText);
            var pin = PinOf(delivered);
            Assert.Equal(22, pin.Length);
            Assert.Equal("NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n", (await PullAsync(puller, "P", """{"batch":1,"expires":5000000000,"group":"jobs","id":"not-the-pin"}""")).HeaderText);

            // The pinned id is served (its header on the message); a request without one waits for the pin to go.
            await puller.SendAsync("PUB s.a 6\r\nsecond\r\n");
            var again = await PullAsync(puller, "P", $$"""{"batch":1,"expires":5000000000,"group":"jobs","id":"{{pin}}"}""");
            Assert.Equal(("second", pin), (again.PayloadText, PinOf(again)));
            await puller.SendAsync("PUB s.a 5\r\nthird\r\n");
            Assert.StartsWith("NATS/1.0 408 Request Timeout", (await PullAsync(puller, "P", """{"batch":1,"expires":1000000000,"group":"jobs"}""")).HeaderText);
        });
    }

    [Fact]
    public async Task Unpin_answers_as_nats_server_and_the_old_clients_waiting_request_ends_with_423_when_the_next_message_comes()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            await using var events = await WireClient.ConnectAsync(server);
            await events.HandshakeAsync();
            await events.SendAsync("SUB $JS.EVENT.ADVISORY.CONSUMER.PINNED.S.P 1\r\nSUB $JS.EVENT.ADVISORY.CONSUMER.UNPINNED.S.P 2\r\n");
            await events.PingPongAsync();

            using (var missing = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", """{"group":"jobs"}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(missing, UnpinType, 404, 10059, "stream not found");
            }

            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var missing = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", """{"group":"jobs"}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(missing, UnpinType, 404, 10014, "consumer not found");
            }

            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","priority_groups":["jobs"],"priority_policy":"pinned_client"}}""")) { }
            using (var empty = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", ""))
            {
                Wire.JetStreamStrictApiTests.AssertError(empty, UnpinType, 400, 10025, "invalid JSON: unexpected end of JSON input");
            }

            using (var noGroup = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", "{}"))
            {
                Wire.JetStreamStrictApiTests.AssertError(noGroup, UnpinType, 400, 10025, "invalid JSON: consumer group not specified");
            }

            using (var badName = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", """{"group":"no spaces"}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(badName, UnpinType, 400, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters");
            }

            using (var unknown = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.UNPIN.S.P", """{"group":"other"}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(unknown, UnpinType, 400, 10160, "Provided priority group does not exist for this consumer");
            }

            // Client A is pinned by a message; its next request (with its id) waits.
            await using var puller = await WireClient.ConnectAsync(server);
            await puller.HandshakeAsync();
            await puller.SendAsync("SUB pull.1 1\r\nSUB pull.old 2\r\nSUB pull.new 3\r\n");
            await puller.PingPongAsync();
            await puller.SendAsync("PUB s.a 5\r\nfirst\r\n");
            var pin = PinOf(await PullAsync(puller, "P", """{"batch":1,"expires":10000000000,"group":"jobs"}"""));
            var pinned = await NextAdvisoryAsync(events);
            Assert.Equal("$JS.EVENT.ADVISORY.CONSUMER.PINNED.S.P", pinned.Subject);
            using (var advisory = JsonDocument.Parse(pinned.Payload))
            {
                Assert.Equal("io.nats.jetstream.advisory.v1.consumer_group_pinned", advisory.RootElement.GetProperty("type").GetString());
                Assert.Equal(("S", "P", "jobs", pin), (advisory.RootElement.GetProperty("stream").GetString(), advisory.RootElement.GetProperty("consumer").GetString(), advisory.RootElement.GetProperty("group").GetString(), advisory.RootElement.GetProperty("pinned_id").GetString()));
                Assert.False(string.IsNullOrEmpty(advisory.RootElement.GetProperty("id").GetString()));
            }

            await SendPullAsync(puller, "P", "pull.old", $$"""{"batch":5,"expires":10000000000,"group":"jobs","id":"{{pin}}"}""");
            using (var info = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.S.P", ""))
            {
                var state = info.RootElement.GetProperty("priority_groups")[0];
                Assert.Equal(("jobs", pin), (state.GetProperty("group").GetString(), state.GetProperty("pinned_client_id").GetString()));
                Assert.NotEqual("0001-01-01T00:00:00Z", state.GetProperty("pinned_ts").GetString());
            }

            await c.SendAsync($"PUB $JS.API.CONSUMER.UNPIN.S.P _INBOX.api 16\r\n{{\"group\":\"jobs\"}}\r\n");
            var answer = await c.ExpectMsgAsync();
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.consumer_unpin_response"}""", answer.PayloadText);
            var unpinned = await NextAdvisoryAsync(events);
            Assert.Equal("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.S.P", unpinned.Subject);
            using (var advisory = JsonDocument.Parse(unpinned.Payload))
            {
                Assert.Equal("io.nats.jetstream.advisory.v1.consumer_group_unpinned", advisory.RootElement.GetProperty("type").GetString());
                Assert.Equal(("S", "P", "jobs", "admin"), (advisory.RootElement.GetProperty("stream").GetString(), advisory.RootElement.GetProperty("consumer").GetString(), advisory.RootElement.GetProperty("group").GetString(), advisory.RootElement.GetProperty("reason").GetString()));
            }

            using (var info = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.S.P", ""))
            {
                Assert.Equal("""[{"group":"jobs","pinned_ts":"0001-01-01T00:00:00Z"}]""", info.RootElement.GetProperty("priority_groups").GetRawText());
            }

            // Client B asks without an id; the next message ends A's old request (423, with what it had left) and pins B.
            await SendPullAsync(puller, "P", "pull.new", """{"batch":1,"expires":10000000000,"group":"jobs"}""");
            await puller.SendAsync("PUB s.a 6\r\nsecond\r\n");
            WireMessage? refused = null, delivered = null;
            for (var frames = 0; (refused is null || delivered is null) && frames < 10; frames++)
            {
                var message = await puller.ExpectMsgAsync(); // a delivery shows the message's subject: told apart by sid
                if (message.Sid == "2")
                {
                    refused = message;
                }
                else if (message.Sid == "3")
                {
                    delivered = message;
                }
            }

            Assert.Equal("NATS/1.0 423 Nats-Wrong-Pin-Id\r\nNats-Pending-Messages: 5\r\nNats-Pending-Bytes: 0\r\n\r\n", refused!.HeaderText);
            Assert.Equal("second", delivered!.PayloadText);
            Assert.NotEqual(pin, PinOf(delivered));
        });
    }

    [Fact]
    public async Task Prioritized_serves_the_waiting_request_with_the_lowest_priority_first()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var created = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","priority_groups":["jobs"],"priority_policy":"prioritized"}}"""))
            {
                Assert.Equal("prioritized", created.RootElement.GetProperty("config").GetProperty("priority_policy").GetString());
            }

            await using var puller = await WireClient.ConnectAsync(server);
            await puller.HandshakeAsync();
            await puller.SendAsync("SUB pull.low 1\r\nSUB pull.high 2\r\nSUB pull.mid 3\r\n");
            await puller.PingPongAsync();
            await SendPullAsync(puller, "C", "pull.low", """{"batch":1,"expires":10000000000,"group":"jobs","priority":5}""");
            await SendPullAsync(puller, "C", "pull.high", """{"batch":1,"expires":10000000000,"group":"jobs","priority":1}""");
            await SendPullAsync(puller, "C", "pull.mid", """{"batch":1,"expires":10000000000,"group":"jobs","priority":3}""");
            await WaitForAsync(async () =>
            {
                using var info = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.S.C", "");
                return info.RootElement.GetProperty("num_waiting").GetInt32() == 3;
            }, CancellationToken.None);

            var order = new List<string>();
            for (var i = 0; i < 3; i++)
            {
                await puller.SendAsync($"PUB s.a 2\r\nm{i}\r\n");
                var message = await puller.ExpectMsgAsync();
                order.Add($"{message.Sid switch { "1" => "low", "2" => "high", _ => "mid" }}:{message.PayloadText}");
            }

            Assert.Equal(["high:m0", "mid:m1", "low:m2"], order);
        });
    }

    private const string UnpinType = "io.nats.jetstream.api.v1.consumer_unpin_response";

    private static ConsumerConfig PinnedConfig(TimeSpan timeout, string name = "C") => new(name)
    {
        AckPolicy = ConsumerConfigAckPolicy.Explicit,
        PriorityGroups = [Group],
        PriorityPolicy = ConsumerConfigPriorityPolicy.PinnedClient,
        PinnedTTL = timeout,
    };

    private static async Task<List<INatsJSMsg<int>>> FetchAsync(INatsJSConsumer consumer, NatsJSPriorityGroupOpts group, int max, TimeSpan expires, CancellationToken ct, bool ack = true)
    {
        var messages = new List<INatsJSMsg<int>>();
        await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = max, Expires = expires, PriorityGroup = group }, cancellationToken: ct))
        {
            messages.Add(msg);
            if (ack)
            {
                await msg.AckAsync(cancellationToken: ct);
            }
        }

        return messages;
    }

    /// <summary>Takes <paramref name="count"/> messages, which must all come to one of the clients: its index and the messages.</summary>
    private static async Task<(int Client, List<INatsJSMsg<int>> Messages)> TakeFromOneAsync(Channel<INatsJSMsg<int>>[] received, int count, CancellationToken ct)
    {
        await Task.WhenAny(received.Select(r => r.Reader.WaitToReadAsync(ct).AsTask()));
        var client = Array.FindIndex(received, r => r.Reader.Count > 0);
        Assert.True(client >= 0, "a message arrived");
        var messages = new List<INatsJSMsg<int>>();
        while (messages.Count < count)
        {
            messages.Add(await received[client].Reader.ReadAsync(ct));
        }

        // Nothing went to the other client meanwhile, nor comes right after.
        await Task.Delay(200, ct);
        Assert.Equal(0, received[1 - client].Reader.Count);
        return (client, messages);
    }

    private static async Task WaitForAsync(Func<Task<bool>> condition, CancellationToken ct)
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            if (await condition())
            {
                return;
            }

            await Task.Delay(100, ct);
        }

        Assert.Fail("condition not reached in 10 s");
    }

    private static string? PinOf(INatsJSMsg<int> msg) =>
        msg.Headers is { } headers && headers.TryGetValue("Nats-Pin-Id", out var pin) ? pin.ToString() : null;

    private static string PinOf(WireMessage message)
    {
        foreach (var line in message.HeaderText.Split("\r\n"))
        {
            if (line.StartsWith("Nats-Pin-Id: ", StringComparison.Ordinal))
            {
                return line["Nats-Pin-Id: ".Length..];
            }
        }

        Assert.Fail($"no Nats-Pin-Id in {message.HeaderText}");
        return "";
    }

    private static Task SendPullAsync(WireClient c, string consumer, string reply, string body) =>
        c.SendAsync($"PUB $JS.API.CONSUMER.MSG.NEXT.S.{consumer} {reply} {Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");

    /// <summary>
    /// Sends a pull request with reply subject <c>pull.1</c> (subscribed as sid 1) and returns the first message for it
    /// (a delivery shows the message's subject, not the reply subject: told apart by sid).
    /// </summary>
    private static async Task<WireMessage> PullAsync(WireClient c, string consumer, string body)
    {
        await SendPullAsync(c, consumer, "pull.1", body);
        while (true)
        {
            var message = await c.ExpectMsgAsync();
            if (message.Sid == "1")
            {
                return message;
            }
        }
    }

    private static async Task<WireMessage> NextAdvisoryAsync(WireClient events) => await events.ExpectMsgAsync();
}
