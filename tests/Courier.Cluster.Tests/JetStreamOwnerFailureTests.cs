using System.Net;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Cluster.Tests;

/// <summary>
/// The node that holds a stream is killed with SIGKILL: clients on the other nodes get nats-server's
/// errors for it at once instead of waiting out their timeouts; started again on its store, the node
/// brings the stream back with its data, reachable from every node.
/// </summary>
public sealed class JetStreamOwnerFailureTests(JetStreamMeshFixture fixture) : IClassFixture<JetStreamMeshFixture>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60); // failure detection, SBR's stable-after, a restart, gossip
    private readonly Mesh _mesh = fixture.Mesh;

    [Fact]
    public async Task While_a_streams_node_is_down_its_requests_fail_fast_and_after_a_restart_its_data_is_back_everywhere()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        int owner;
        await using (var creator = await _mesh.ConnectAsync(0, "creator"))
        {
            var js = new NatsJSContext(creator);
            await js.CreateStreamAsync(new StreamConfig("DURABLE", ["durable.>"]));
            for (var i = 1; i <= 10; i++)
            {
                (await js.PublishAsync("durable.x", $"m{i}")).EnsureSuccess();
            }

            await js.CreateOrUpdateConsumerAsync("DURABLE", new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
            owner = await OwnerAsync(http);
        }

        var asker = owner == 0 ? 1 : 0;
        await using var client = await _mesh.ConnectAsync(asker, "asker");
        var jsAsker = new NatsJSContext(client);
        await _mesh.Nodes[owner].DisposeAsync(); // SIGKILL, by pid

        // Requests are answered within the client's request timeout: an API error, not silence. The one
        // request that may go unanswered is one forwarded in the instant between the kill and this
        // node reading the route's end (it went into a socket the dead node never read; nats-server
        // loses such a request too).
        NatsJSApiException? error = null;
        var unanswered = 0;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await jsAsker.GetStreamAsync("DURABLE");
                        return false; // the route's loss not noticed yet
                    }
                    catch (NatsJSApiException e)
                    {
                        error = e;
                        return true;
                    }
                    catch (Exception e) when (e is NatsNoReplyException or NatsJSApiNoResponseException or TimeoutException)
                    {
                        unanswered++;
                        return false;
                    }
                },
                Timeout),
            $"stream info never failed while its node was down\n{_mesh.Diagnostics()}");
        Assert.True(unanswered <= 1, $"{unanswered} stream info requests went unanswered after the kill, not at most the one in flight");
        Assert.Equal((500, 10118), (error!.Error.Code, error.Error.ErrCode)); // stream is offline
        var consumerError = await Assert.ThrowsAsync<NatsJSApiException>(async () => await jsAsker.GetConsumerAsync("DURABLE", "reader"));
        Assert.Equal((503, 10008), (consumerError.Error.Code, consumerError.Error.ErrCode)); // JetStream system temporarily unavailable

        // A publish has nobody to store it: the client hears no responders rather than waiting.
        await Assert.ThrowsAnyAsync<NatsException>(async () => (await jsAsker.PublishAsync("durable.x", "lost?")).EnsureSuccess());

        var restarted = await _mesh.RestartAsync(owner);
        Assert.True(await NodeMonitor.HealthAsync(http, restarted, HttpStatusCode.OK, Timeout), $"the restarted node never became a healthy member\n{_mesh.Diagnostics()}");
        for (var i = 0; i < 3; i++)
        {
            await using var connection = await _mesh.ConnectAsync(i, "after-restart");
            var js = new NatsJSContext(connection);
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            return (await js.GetStreamAsync("DURABLE")).Info.State.Messages == 10;
                        }
                        catch (NatsJSApiException)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"node {i} never reached the restarted stream\n{_mesh.Diagnostics()}");
        }

        // The durable consumer is back too, and delivers the data to a client on another node.
        var consumer = await jsAsker.GetConsumerAsync("DURABLE", "reader");
        var read = new List<string?>();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: cts.Token))
        {
            read.Add(msg.Data);
            await msg.AckAsync(cancellationToken: cts.Token);
        }

        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), read);
    }

    // The node whose /jsz counts the one stream of this class.
    private async Task<int> OwnerAsync(HttpClient http)
    {
        for (var i = 0; i < _mesh.Nodes.Count; i++)
        {
            using var jsz = JsonDocument.Parse(await http.GetStringAsync(new Uri(_mesh.Nodes[i].MonitorUri, "jsz")));
            if (jsz.RootElement.GetProperty("streams").GetInt32() == 1)
            {
                return i;
            }
        }

        throw new InvalidOperationException($"no node holds the stream\n{_mesh.Diagnostics()}");
    }
}
