using System.Text;
using System.Text.Json;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// What the mirror and source tests share: waiting for a stream to catch up with its origins,
/// reading it back with the source header, and raw JetStream API requests.
/// </summary>
internal static class StreamCopies
{
    private static readonly TimeSpan CatchUpTimeout = TimeSpan.FromSeconds(20); // a loaded machine copies slowly; nats-server checks its origins each second

    /// <summary>Polls STREAM.INFO until <paramref name="done"/> holds (bounded), and returns that info.</summary>
    public static async Task<StreamInfo> WaitForAsync(INatsJSContext js, string stream, Func<StreamInfo, bool> done, CancellationToken ct)
    {
        var deadline = DateTime.UtcNow + CatchUpTimeout;
        while (true)
        {
            var info = (await js.GetStreamAsync(stream, cancellationToken: ct)).Info;
            if (done(info))
            {
                return info;
            }

            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"stream {stream} did not get there in {CatchUpTimeout}: {info.State.Messages} messages, last {info.State.LastSeq}");
            }

            await Task.Delay(100, ct);
        }
    }

    /// <summary>Every message of <paramref name="stream"/> in order, read by an ephemeral consumer: subject, payload and Nats-Stream-Source header ("" without).</summary>
    public static async Task<List<(string Subject, string? Data, string Source)>> ReadAllAsync(INatsJSContext js, string stream, int count, CancellationToken ct)
    {
        var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig { AckPolicy = ConsumerConfigAckPolicy.None }, ct);
        var read = new List<(string, string?, string)>();
        while (read.Count < count)
        {
            var before = read.Count;
            await foreach (var m in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = count - read.Count, Expires = TimeSpan.FromSeconds(2) }, cancellationToken: ct))
            {
                var source = m.Headers is { } headers && headers.TryGetValue("Nats-Stream-Source", out var value) ? value.ToString() : "";
                read.Add((m.Subject, m.Data, source));
            }

            Assert.True(read.Count > before, $"stream {stream} had {read.Count} of {count} messages to read");
        }

        return read;
    }

    /// <summary>A JetStream API request with a JSON body, through the client's plain request/reply; the reply parsed.</summary>
    public static async Task<JsonDocument> RequestAsync(NatsConnection nats, string subject, string body, CancellationToken ct)
    {
        var reply = await nats.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), cancellationToken: ct);
        return JsonDocument.Parse(reply.Data ?? []);
    }
}
