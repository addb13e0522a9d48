using System.Globalization;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>JetStream over a raw <see cref="LineClient"/>: requests with replies on <c>_INBOX.t.*</c> (sid 1) and pull fetches.</summary>
internal static class JetStreamWire
{
    /// <summary>A client subscribed to <c>_INBOX.t.*</c> (sid 1), the replies <see cref="RequestAsync"/> reads, once the broker has taken the SUB.</summary>
    public static async Task<LineClient> ConnectRequesterAsync(BrokerHarness harness)
    {
        var c = await harness.ConnectAsync();
        await c.SendAsync("SUB _INBOX.t.* 1\r\nPING\r\n");
        await c.ExpectLineAsync("PONG");
        return c;
    }

    public static async Task<string> RequestAsync(LineClient c, string subject, string payload)
    {
        await c.SendAsync($"PUB {subject} _INBOX.t.reply {payload.Length}\r\n{payload}\r\n");
        var header = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
        Assert.StartsWith("MSG _INBOX.t.reply 1", header, StringComparison.Ordinal);
        return await c.ReadLineAsync() ?? "";
    }

    // CONSUMER.MSG.NEXT, then MSG lines until the batch is full or a status (HMSG) ends it.
    public static async Task<List<Delivered>> FetchAsync(LineClient c, int batch, bool noWait = false, string stream = "FI", string consumer = "D")
    {
        var request = noWait ? $$"""{"batch":{{batch}},"no_wait":true}""" : $$"""{"batch":{{batch}}}""";
        await c.SendAsync($"PUB $JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer} _INBOX.t.fetch {request.Length}\r\n{request}\r\n");
        var delivered = new List<Delivered>();
        while (delivered.Count < batch)
        {
            var line = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
            if (line.StartsWith("HMSG", StringComparison.Ordinal))
            {
                // NATS/1.0 404 or 408, maybe Nats-Pending-* headers, the end of headers, the empty payload.
                while (!string.IsNullOrEmpty(await c.ReadLineAsync()))
                {
                }

                await c.ReadLineAsync();
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

    public sealed record Delivered(string AckSubject, ulong StreamSeq);
}
