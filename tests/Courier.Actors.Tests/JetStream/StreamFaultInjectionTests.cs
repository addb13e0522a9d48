using System.Globalization;
using Courier.Actors.JetStream;
using Courier.Actors.Runtime;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// Kills a running stream actor: it restarts, recovers from its store and its durable consumer's
/// state file, and neither loses nor repeats an acknowledged message.
/// </summary>
public sealed class StreamFaultInjectionTests : IDisposable
{
    private readonly string _storeDir = Directory.CreateTempSubdirectory("courier-fi-").FullName;

    [Fact]
    public async Task A_killed_stream_actor_recovers_without_losing_or_repeating_acknowledged_messages()
    {
        await using var harness = new BrokerHarness(new ServerOptions { Host = "127.0.0.1", JetStream = true, StoreDir = _storeDir });
        using var c = await harness.ConnectAsync();
        await c.SendAsync("SUB _INBOX.t.* 1\r\nPING\r\n");
        await c.ExpectLineAsync("PONG");

        await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
        for (var i = 1; i <= 10; i++)
        {
            var ack = await RequestAsync(c, $"fi.{i}", "x");
            Assert.Contains($"\"seq\":{i}", ack, StringComparison.Ordinal);
        }

        await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", """{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"explicit"}}""");
        var first = await FetchAsync(c, 4);
        Assert.Equal([1UL, 2, 3, 4], first.Select(m => m.StreamSeq));
        foreach (var m in first)
        {
            // Double ack: the confirmation comes once the ack is recorded.
            await RequestAsync(c, m.AckSubject, "+ACK");
        }

        var stream = await harness.Broker.JetStream!.Ask<IActorRef>(new JetStreamApi.Protocol.GetStream("FI"), TimeSpan.FromSeconds(5));
        stream.Tell(Kill.Instance);

        // The restarted stream answers again, with every message and the next sequence.
        var info = "";
        for (var attempt = 0; attempt < 50 && !info.Contains("\"messages\":10", StringComparison.Ordinal); attempt++)
        {
            await Task.Delay(50);
            info = await RequestAsync(c, "$JS.API.STREAM.INFO.FI", "");
        }

        Assert.Contains("\"messages\":10", info, StringComparison.Ordinal);
        Assert.Contains("\"seq\":11", await RequestAsync(c, "fi.11", "x"), StringComparison.Ordinal);

        var rest = await FetchAsync(c, 20, noWait: true);
        Assert.Equal([5UL, 6, 7, 8, 9, 10, 11], rest.Select(m => m.StreamSeq));
    }

    public void Dispose() => Directory.Delete(_storeDir, recursive: true);

    private static async Task<string> RequestAsync(LineClient c, string subject, string payload)
    {
        await c.SendAsync($"PUB {subject} _INBOX.t.reply {payload.Length}\r\n{payload}\r\n");
        var header = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
        Assert.StartsWith("MSG _INBOX.t.reply 1", header, StringComparison.Ordinal);
        return await c.ReadLineAsync() ?? "";
    }

    // CONSUMER.MSG.NEXT, then MSG lines until the batch is full or a status (HMSG) ends it.
    private static async Task<List<Delivered>> FetchAsync(LineClient c, int batch, bool noWait = false)
    {
        var request = noWait ? $$"""{"batch":{{batch}},"no_wait":true}""" : $$"""{"batch":{{batch}}}""";
        await c.SendAsync($"PUB $JS.API.CONSUMER.MSG.NEXT.FI.D _INBOX.t.fetch {request.Length}\r\n{request}\r\n");
        var delivered = new List<Delivered>();
        while (delivered.Count < batch)
        {
            var line = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
            if (line.StartsWith("HMSG", StringComparison.Ordinal))
            {
                await c.ReadLineAsync(); // NATS/1.0 404 or 408
                await c.ReadLineAsync(); // end of headers
                await c.ReadLineAsync(); // empty payload
                break;
            }

            // MSG <subject> <sid> <ack subject> <size>
            var parts = line.Split(' ');
            var ack = parts[3];
            delivered.Add(new Delivered(ack, ulong.Parse(ack.Split('.')[5], CultureInfo.InvariantCulture)));
            await c.ReadLineAsync(); // payload
        }

        return delivered;
    }

    private sealed record Delivered(string AckSubject, ulong StreamSeq);
}
