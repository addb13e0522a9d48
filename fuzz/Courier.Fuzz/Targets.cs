using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Courier.Gateway.Configuration;
using Courier.Protocols.JetStream;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Nats;
using Courier.Protocols.WebSocket;
using Courier.Storage;
using Courier.Storage.IO;
using Courier.Storage.Persistence;

namespace Courier.Fuzz;

/// <summary>
/// The fuzz targets: each takes arbitrary bytes and must return normally (input it rejects is fine, as
/// an error status or the one exception its contract names); any other exception, a hang or a crash is
/// a bug. Shared by the AFL++ driver (Program.cs) and the smoke test (fuzz/Courier.Fuzz.Tests).
/// </summary>
internal static class Targets
{
    private static readonly Dictionary<string, Action<byte[]>> All = new(StringComparer.Ordinal)
    {
        ["nats"] = Nats,
        ["config"] = Config,
        ["jsapi"] = JetStreamApi,
        ["filestore"] = FileStoreRecovery,
        ["mqtt"] = Mqtt,
        ["websocket"] = WebSocket,
    };

    public static IEnumerable<string> Names => All.Keys;

    public static Action<byte[]> Get(string name) =>
        All.TryGetValue(name, out var target) ? target : throw new ArgumentException($"no fuzz target '{name}' (targets: {string.Join(", ", All.Keys)})");

    /// <summary>The NATS client parser: every command in the bytes, whole and split in two segments.</summary>
    public static void Nats(byte[] data)
    {
        var parser = new NatsParser(maxControlLine: 1024, maxPayload: 64 * 1024);
        var sequence = new ReadOnlySequence<byte>(data);
        ReadAll(parser, sequence);
        if (data.Length > 1)
        {
            ReadAll(new NatsParser(maxControlLine: 1024, maxPayload: 64 * 1024), Split(data, data[0] % data.Length));
        }

        static void ReadAll(NatsParser parser, ReadOnlySequence<byte> input)
        {
            var reader = new SequenceReader<byte>(input);
            var command = default(ClientCommand);
            for (var i = 0; i < 10_000 && parser.TryRead(ref reader, ref command, out _) == ParseStatus.Command; i++)
            {
            }
        }
    }

    /// <summary>The config-file parser; <see cref="ConfigException"/> is its way of rejecting input.</summary>
    public static void Config(byte[] data)
    {
        var text = Encoding.UTF8.GetString(data);
        if (text.Contains("include", StringComparison.OrdinalIgnoreCase))
        {
            return; // includes read files: a fuzzer must not wander the file system (/dev/zero would never end)
        }

        try
        {
            ConfigParser.Parse(text);
        }
        catch (ConfigException)
        {
        }
    }

    /// <summary>The $JS.API request models, through their source-generated contexts, as the API actor reads them.</summary>
    public static void JetStreamApi(byte[] data)
    {
        Json(data, JetStreamJsonContext.Default.StreamConfig);
        Json(data, JetStreamJsonContext.Default.StreamListRequest);
        Json(data, JetStreamJsonContext.Default.StreamPurgeRequest);
        Json(data, JetStreamJsonContext.Default.MsgGetRequest);
        Json(data, JetStreamJsonContext.Default.MsgDeleteRequest);
        Json(data, ConsumerJsonContext.Default.CreateConsumerRequest);
        Json(data, ConsumerJsonContext.Default.NextRequest);
        Json(data, NatsJsonContext.Default.ConnectOptions);

        static void Json<T>(byte[] data, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type)
        {
            try
            {
                JsonSerializer.Deserialize(data, type);
            }
            catch (JsonException)
            {
            }
        }
    }

    /// <summary>
    /// FileStore and journal recovery from arbitrary block and index bytes, then every message read. The
    /// files live in memory (<see cref="MemoryFileSystem"/>, the store's own file seam): recovery runs the
    /// same code on the same bytes, at hundreds of times the rate of real files.
    /// </summary>
    public static void FileStoreRecovery(byte[] data) => RecoverStore(data, onDisk: false, report: null);

    /// <summary>
    /// Recovers a store and its journal from the filestore target's input, in memory or on real files, and
    /// writes what it found to <paramref name="report"/> (the state, every message, the journal's count).
    /// </summary>
    internal static void RecoverStore(byte[] data, bool onDisk, StringBuilder? report)
    {
        var dir = Path.GetFullPath(Path.Combine(Path.GetTempPath(), onDisk ? $"courier-fuzz-{Environment.ProcessId}-{Guid.NewGuid():N}" : "courier-fuzz"));
        var memory = onDisk ? null : new MemoryFileSystem();
        StoreFileSystem fs = memory ?? StoreFileSystem.Os;
        try
        {
            // The input is one or two files: a block and, after a 0xFF 0xFE separator, its index (the seed
            // corpus/filestore/block-and-index is a real pair, written by --make-filestore-seed, so
            // mutations start from valid headers).
            var cut = data.AsSpan().IndexOf([(byte)0xFF, (byte)0xFE]);
            Seed(Path.Combine(dir, "0000000001.blk"), cut < 0 ? data : data[..cut]);
            if (cut >= 0)
            {
                Seed(Path.Combine(dir, "0000000001.idx"), data[(cut + 2)..]);
            }

            var options = new FileStoreOptions { FileSystem = fs };
            using (var store = StreamStores.OpenFile(dir, new StoreConfig { Name = "fuzz" }, options))
            {
                var state = store.State();
                report?.AppendLine(CultureInfo.InvariantCulture, $"msgs={state.Msgs} first={state.FirstSeq} last={state.LastSeq} lost={state.Lost?.Msgs.Count ?? 0}");
                for (var r = store.LoadNextMessage(null, 0); r.Found; r = store.LoadNextMessage(null, r.Message!.Sequence + 1))
                {
                    var m = r.Message!;
                    report?.AppendLine(CultureInfo.InvariantCulture, $"{m.Sequence} {m.Subject} {Convert.ToHexString(m.Headers.Span)} {Convert.ToHexString(m.Payload.Span)}");
                }
            }

            using var journal = FileJournalStore.Open(dir, options);
            var replayed = journal.ReplayMessages("fuzz", 0, long.MaxValue, long.MaxValue, _ => { });
            report?.AppendLine(CultureInfo.InvariantCulture, $"journal={replayed}");
        }
        finally
        {
            fs.DeleteDirectory(dir);
        }

        void Seed(string path, byte[] bytes)
        {
            if (memory is not null)
            {
                memory.Seed(path, bytes);
            }
            else
            {
                Directory.CreateDirectory(dir);
                File.WriteAllBytes(path, bytes);
            }
        }
    }

    /// <summary>A real block file and its index (messages, a tombstone, a floor) in the filestore target's input format.</summary>
    public static byte[] FileStoreSeed()
    {
        var dir = Path.Combine(Path.GetTempPath(), "courier-fuzz-seed-" + Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture));
        try
        {
            var store = StreamStores.OpenFile(dir, new StoreConfig { Name = "seed" });
            for (var i = 0; i < 6; i++)
            {
                store.Append(Encoding.ASCII.GetBytes($"orders.{i % 3}"), i % 2 == 0 ? [] : "NATS/1.0\r\nA: b\r\n\r\n"u8, Encoding.ASCII.GetBytes($"payload {i}"));
            }

            store.Flush();
            store.RemoveMessage(3);
            store.RemoveMessage(1);
            store.Stop();
            return [.. File.ReadAllBytes(Path.Combine(dir, "0000000001.blk")), 0xFF, 0xFE, .. File.ReadAllBytes(Path.Combine(dir, "0000000001.idx"))];
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>The MQTT 3.1.1 codec: every packet in the bytes, whole and split.</summary>
    public static void Mqtt(byte[] data)
    {
        ReadAll(new MqttParser(maxPacketSize: 64 * 1024), new ReadOnlySequence<byte>(data));
        if (data.Length > 1)
        {
            ReadAll(new MqttParser(maxPacketSize: 64 * 1024), Split(data, data[0] % data.Length));
        }

        static void ReadAll(MqttParser parser, ReadOnlySequence<byte> input)
        {
            var reader = new SequenceReader<byte>(input);
            var packet = default(MqttPacket);
            for (var i = 0; i < 10_000 && parser.TryRead(ref reader, ref packet, out _) == MqttReadStatus.Packet; i++)
            {
            }
        }
    }

    /// <summary>The WebSocket frame reader (masked and unmasked, with compression negotiated) and the handshake parser.</summary>
    public static void WebSocket(byte[] data)
    {
        Frames(new WebSocketFrameReader(64 * 1024, requireMask: true, compressionNegotiated: true), (byte[])data.Clone());
        Frames(new WebSocketFrameReader(64 * 1024, requireMask: false), (byte[])data.Clone());
        WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(data), 8 * 1024, out _, out _);

        static void Frames(WebSocketFrameReader reader, byte[] input)
        {
            var at = 0;
            for (var i = 0; i < 10_000 && at <= input.Length; i++)
            {
                var status = reader.Read(input.AsSpan(at), out var consumed, out _);
                if (status is WebSocketReadStatus.NeedMoreData or WebSocketReadStatus.Error || consumed == 0)
                {
                    return;
                }

                at += consumed;
            }
        }
    }

    private static ReadOnlySequence<byte> Split(byte[] data, int at)
    {
        var first = new Segment(data.AsMemory(0, at));
        var last = first.Append(data.AsMemory(at));
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory) => Memory = memory;

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory) { RunningIndex = RunningIndex + Memory.Length };
            Next = next;
            return next;
        }
    }
}
