using System.Buffers;
using System.Text;
using Courier.Actors.Connections;
using Xunit;

namespace Courier.Actors.Tests.Connections;

/// <summary>What the write pump sends is every queued MSG byte for byte, in order, whether a frame fits the current chunk or straddles chunks.</summary>
public sealed class OutboundTests
{
    [Fact]
    public async Task Msg_frames_of_every_size_come_out_byte_for_byte_in_order_across_chunk_boundaries()
    {
        var outbound = new Outbound(maxPending: 1L << 30);
        var expected = new MemoryStream();

        // Small frames fill the first chunk until one straddles its end; payloads larger than a chunk span
        // several; a payload in two segments is copied from both.
        int[] sizes = [0, 16, 128, 1000, 40_000, OutboundChunkPool.ChunkSize + 7, 3];
        var random = new Random(7);
        for (var i = 0; i < 600; i++)
        {
            var size = i < 590 ? sizes[i % 4] : sizes[4 + ((i - 590) % 3)];
            var payloadBytes = new byte[size];
            random.NextBytes(payloadBytes);
            var payload = i % 5 == 4 && size > 1 ? TwoSegments(payloadBytes) : new ReadOnlySequence<byte>(payloadBytes);
            var prefix = Encoding.ASCII.GetBytes($"MSG subject.{i} ");
            var sid = Encoding.ASCII.GetBytes((i % 13).ToString(System.Globalization.CultureInfo.InvariantCulture));
            var suffix = Encoding.ASCII.GetBytes($" {size}\r\n");

            Assert.True(outbound.WriteMsg(prefix, sid, suffix, payload));
            expected.Write(prefix);
            expected.Write(sid);
            expected.Write(suffix);
            expected.Write(payloadBytes);
            expected.Write("\r\n"u8);
        }

        var sent = new MemoryStream();
        outbound.Complete();
        await outbound.RunWritePumpAsync(sent);

        Assert.Equal(600, outbound.OutMsgs);
        Assert.True(expected.ToArray().AsSpan().SequenceEqual(sent.ToArray()), "the bytes sent differ from the frames queued");
    }

    [Fact]
    public async Task A_quiet_clients_batch_is_written_from_a_small_chunk_and_a_batch_that_outgrows_it_is_still_one_write()
    {
        var outbound = new Outbound(maxPending: 1L << 30);
        var sent = new RecordingStream();
        var pump = outbound.RunWritePumpAsync(sent);

        // A PONG: the whole batch fits a small chunk, so no 64 KB chunk is taken for it.
        Assert.True(outbound.Write("PONG\r\n"u8));
        outbound.Signal();
        await sent.WaitForWritesAsync(1);
        Assert.Equal(OutboundChunkPool.SmallChunkSize, sent.Writes[0].ArrayLength);

        // 10 KB in 100-byte frames: the batch starts in a small chunk, moves to a large one when it
        // fills, and goes out in one write of every byte, in order.
        var expected = new MemoryStream();
        for (var i = 0; i < 100; i++)
        {
            var frame = Encoding.ASCII.GetBytes($"+OK {i:D3}".PadRight(98, '.') + "\r\n");
            Assert.True(outbound.Write(frame));
            expected.Write(frame);
        }

        outbound.Signal();
        await sent.WaitForWritesAsync(2);
        Assert.Equal(OutboundChunkPool.ChunkSize, sent.Writes[1].ArrayLength);
        Assert.Equal(expected.ToArray(), sent.Writes[1].Bytes);

        // That batch was large: the next one starts in a large chunk directly (no copy for a busy client).
        Assert.True(outbound.Write("PONG\r\n"u8));
        outbound.Signal();
        await sent.WaitForWritesAsync(3);
        Assert.Equal(OutboundChunkPool.ChunkSize, sent.Writes[2].ArrayLength);

        outbound.Complete();
        await pump;
        Assert.Equal(3, sent.Writes.Count);
    }

    private sealed record Written(int ArrayLength, byte[] Bytes);

    /// <summary>Records each write: its bytes and the length of the array they were written from.</summary>
    private sealed class RecordingStream : MemoryStream
    {
        private readonly SemaphoreSlim _written = new(0);

        public List<Written> Writes { get; } = [];

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray(buffer, out var segment));
            lock (Writes)
            {
                Writes.Add(new Written(segment.Array!.Length, buffer.ToArray()));
            }

            _written.Release();
            return ValueTask.CompletedTask;
        }

        public async Task WaitForWritesAsync(int count)
        {
            while (true)
            {
                lock (Writes)
                {
                    if (Writes.Count >= count)
                    {
                        return;
                    }
                }

                Assert.True(await _written.WaitAsync(TimeSpan.FromSeconds(10)), $"fewer than {count} writes");
            }
        }
    }

    [Fact]
    public async Task Direct_subscribers_are_completed_once_at_the_next_signal_and_their_deliveries_counted_without_a_write()
    {
        var outbound = new Outbound(maxPending: 1L << 30);
        var sent = new RecordingStream();
        var pump = outbound.RunWritePumpAsync(sent);
        var a = new CountingDirect();
        var b = new CountingDirect();

        // Two subscribers, three deliveries: each noted once, at its first.
        a.Delivered(10);
        outbound.AddDirectPending(a);
        a.Delivered(10);
        b.Delivered(5);
        outbound.AddDirectPending(b);
        Assert.Equal(0, a.Completions);
        Assert.Equal(0, outbound.OutMsgs);

        outbound.Signal();
        Assert.Equal(1, a.Completions);
        Assert.Equal(1, b.Completions);
        Assert.Equal(3, outbound.OutMsgs);
        Assert.Equal(25, outbound.OutBytes);

        // Nothing new: a signal completes nobody again.
        outbound.Signal();
        Assert.Equal(1, a.Completions);

        // A framed write after direct ones still goes out, and only it.
        b.Delivered(1);
        outbound.AddDirectPending(b);
        Assert.True(outbound.Write("PONG\r\n"u8));
        outbound.Signal();
        Assert.Equal(2, b.Completions);
        Assert.Equal(4, outbound.OutMsgs);
        await sent.WaitForWritesAsync(1);
        Assert.Equal("PONG\r\n", Encoding.ASCII.GetString(sent.Writes[0].Bytes));
        Assert.Single(sent.Writes);

        outbound.Complete();
        await pump;
    }

    private sealed class CountingDirect : IDirectSubscriber
    {
        private long _messages;
        private long _bytes;

        public int Completions { get; private set; }

        public void Delivered(long bytes)
        {
            _messages++;
            _bytes += bytes;
        }

        public bool Deliver(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, Publisher from, out bool first) =>
            throw new NotSupportedException("the outbound only completes");

        public void Complete(out long messages, out long bytes)
        {
            Completions++;
            (messages, bytes) = (_messages, _bytes);
            (_messages, _bytes) = (0, 0);
        }
    }

    private static ReadOnlySequence<byte> TwoSegments(byte[] bytes)
    {
        var half = bytes.Length / 2;
        var first = new Segment(bytes.AsMemory(0, half), 0);
        var second = new Segment(bytes.AsMemory(half), half);
        first.SetNext(second);
        return new ReadOnlySequence<byte>(first, 0, second, bytes.Length - half);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public void SetNext(Segment next) => Next = next;
    }
}
