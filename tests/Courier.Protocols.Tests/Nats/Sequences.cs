using System.Buffers;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// Builds <see cref="ReadOnlySequence{T}"/>s out of separate chunks, each in its own array and its
/// own segment, the way a pipe hands out data that arrived in several reads.
/// </summary>
internal static class Sequences
{
    /// <summary>One segment per chunk, in order; empty chunks make empty segments.</summary>
    public static ReadOnlySequence<byte> FromChunks(IReadOnlyList<byte[]> chunks)
    {
        if (chunks.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        if (chunks.Count == 1)
        {
            return new ReadOnlySequence<byte>(chunks[0].ToArray());
        }

        var first = new Segment(chunks[0].ToArray(), runningIndex: 0);
        var last = first;
        for (var i = 1; i < chunks.Count; i++)
        {
            last = last.Append(chunks[i].ToArray());
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    /// <summary>Every byte a separate segment.</summary>
    public static ReadOnlySequence<byte> ByteByByte(byte[] bytes) =>
        FromChunks(bytes.Select(b => new[] { b }).ToArray());

    /// <summary>Two segments, the second starting at <paramref name="position"/>.</summary>
    public static ReadOnlySequence<byte> SplitAt(byte[] bytes, int position) =>
        FromChunks([bytes[..position], bytes[position..]]);

    /// <summary>Consecutive chunks of <paramref name="size"/> bytes (the last may be shorter).</summary>
    public static List<byte[]> Chunk(byte[] bytes, int size) => bytes.Chunk(size).ToList();

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
