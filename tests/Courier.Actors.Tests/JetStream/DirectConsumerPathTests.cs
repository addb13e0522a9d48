using Akka.Actor;
using Akka.Event;
using Courier.Actors.JetStream;
using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// Pull requests (CONSUMER.MSG.NEXT) and acks go from the API client's read loop straight to the
/// consumer (ConsumerDirectory), not through the API and stream actors: while a file stream's actor
/// cannot run (the I/O dispatcher it runs on is held), its consumer still serves fetches and acks.
/// </summary>
public sealed class DirectConsumerPathTests : JetStreamTestKit
{
    public DirectConsumerPathTests()
        : base("courier.io-dispatcher.dedicated-thread-pool.thread-count = 1")
    {
    }

    [Fact]
    public async Task A_pull_request_and_a_double_ack_reach_the_consumer_while_its_file_streams_actor_is_held()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"],"storage":"file"}""");
        Assert.Contains("\"seq\":1", await RequestAsync(c, "fi.a", "one"), StringComparison.Ordinal);
        Assert.Contains("\"seq\":2", await RequestAsync(c, "fi.b", "two"), StringComparison.Ordinal);

        // An ephemeral consumer: it journals nothing, so nothing of it needs the held dispatcher.
        Assert.Contains("\"name\":\"E\"", await RequestAsync(c, "$JS.API.CONSUMER.CREATE.FI.E", """{"stream_name":"FI","config":{"name":"E","ack_policy":"explicit"}}"""), StringComparison.Ordinal);

        // Hold the I/O dispatcher's only thread: the stream actor can process nothing meanwhile.
        using (await HoldIoDispatcherAsync())
        {
            var first = Assert.Single(await FetchAsync(c, 1, stream: "FI", consumer: "E"));
            Assert.Equal(1UL, first.StreamSeq);

            // A double ack: the consumer confirms it on the reply subject once it has taken the ack.
            await c.SendAsync($"PUB {first.AckSubject} _INBOX.t.acked 0\r\n\r\n");
            Assert.StartsWith("MSG _INBOX.t.acked 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
            Assert.Equal("", await c.ReadLineAsync());

            var second = Assert.Single(await FetchAsync(c, 1, stream: "FI", consumer: "E"));
            Assert.Equal(2UL, second.StreamSeq);

            // CONSUMER.INFO does go through the stream actor: it is answered once the dispatcher is free.
            await c.SendAsync("PUB $JS.API.CONSUMER.INFO.FI.E _INBOX.t.info 0\r\n\r\n");
        }

        Assert.StartsWith("MSG _INBOX.t.info 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Contains("\"ack_floor\":{\"consumer_seq\":1,\"stream_seq\":1", await c.ReadLineAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_pull_request_for_a_consumer_that_is_not_running_takes_the_api_path_and_a_deleted_one_gets_no_deliveries()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"],"storage":"memory"}""");
        await RequestAsync(c, "fi.a", "one");

        // No such consumer: answered by the stream, as before.
        await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.FI.NONE _INBOX.t.fetch 1\r\n1\r\n");
        Assert.StartsWith("HMSG _INBOX.t.fetch 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Equal("NATS/1.0 404 Consumer Not Found", await c.ReadLineAsync());
        await c.ReadLineAsync();
        await c.ReadLineAsync();

        await RequestAsync(c, "$JS.API.CONSUMER.CREATE.FI.E", """{"stream_name":"FI","config":{"name":"E","ack_policy":"none"}}""");
        Assert.Equal(1UL, Assert.Single(await FetchAsync(c, 1, stream: "FI", consumer: "E")).StreamSeq);

        // Deleted: it leaves the directory with the delete, so the next pull request is the stream's again.
        Assert.Contains("\"success\":true", await RequestAsync(c, "$JS.API.CONSUMER.DELETE.FI.E", ""), StringComparison.Ordinal);
        await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.FI.E _INBOX.t.fetch 1\r\n1\r\n");
        Assert.StartsWith("HMSG _INBOX.t.fetch 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Equal("NATS/1.0 404 Consumer Not Found", await c.ReadLineAsync());
    }

    [Fact]
    public async Task A_stream_that_stops_and_cannot_be_reopened_takes_its_consumers_out_of_the_directory()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"],"storage":"file"}""");
        await RequestAsync(c, "fi.a", "one");

        // A durable consumer: each restart of the stream actor starts it again from its state.
        await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", """{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"none"}}""");
        Assert.Equal(1UL, Assert.Single(await FetchAsync(c, 1, stream: "FI", consumer: "D")).StreamSeq);

        // Ten failures: the supervisor restarts the stream actor each time, and it lists the durable
        // consumer again from its files.
        var stream = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        for (var i = 0; i < 10; i++)
        {
            stream.Tell(Kill.Instance);
            var info = "";
            for (var attempt = 0; attempt < 100 && !info.Contains("\"name\":\"D\"", StringComparison.Ordinal); attempt++)
            {
                await Task.Delay(20);
                info = await RequestAsync(c, "$JS.API.CONSUMER.INFO.FI.D", "");
            }

            Assert.Contains("\"name\":\"D\"", info, StringComparison.Ordinal);
        }

        // Then its files go away (a plain file takes the directory's place, so reopening fails) and an
        // eleventh failure, past the supervisor's ten restarts a minute, stops it and its consumer.
        var directory = Directory.EnumerateDirectories(StoreDirectory, "FI", SearchOption.AllDirectories).Single();
        Directory.Move(directory, directory + ".gone");
        await File.WriteAllTextAsync(directory, "not a directory");
        stream.Tell(Kill.Instance);

        var current = stream;
        for (var attempt = 0; attempt < 100 && current.Equals(stream); attempt++)
        {
            await Task.Delay(20);

            // Looked up once the API no longer lists it: the API has then handled the stream's end (and the
            // failed reopen), not only the actor stopped.
            if (!(await RequestAsync(c, "$JS.API.STREAM.NAMES", "")).Contains("\"FI\"", StringComparison.Ordinal))
            {
                current = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
            }
        }

        Assert.Equal(ActorRefs.Nobody, current);

        // A pull request now takes the API's path (which, as nats-server, does not answer one for an unknown
        // stream), not the directory's: nothing is told to the consumer that stopped with its stream.
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters, typeof(DeadLetter));
        await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.FI.D _INBOX.t.fetch 1\r\n1\r\nPING\r\n");
        await c.ExpectLineAsync("PONG");
        var letters = deadLetters.ReceiveWhile(TimeSpan.FromSeconds(1), m => (DeadLetter)m);
        Assert.DoesNotContain(letters, l => l.Message is ConsumerActor.Protocol.Next);
    }
}
