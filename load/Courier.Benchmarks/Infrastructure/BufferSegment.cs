using System.Buffers;

namespace Courier.Benchmarks.Infrastructure;

/// <summary>
/// One segment of a hand-built multi-segment <see cref="ReadOnlySequence{T}"/>, as a pipe hands
/// the parser when a command straddles two reads.
/// </summary>
internal sealed class BufferSegment : ReadOnlySequenceSegment<byte>
{
    private BufferSegment(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    /// <summary>
    /// <paramref name="bytes"/> as a two-segment sequence: <c>[0, at)</c> and <c>[at, end)</c>, each in
    /// its own array so neither segment can be read as part of the other.
    /// </summary>
    public static ReadOnlySequence<byte> Split(byte[] bytes, int at)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(at, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(at, bytes.Length);
        var first = new BufferSegment(bytes.AsSpan(0, at).ToArray(), 0);
        var second = new BufferSegment(bytes.AsSpan(at).ToArray(), at);
        first.Next = second;
        return new ReadOnlySequence<byte>(first, 0, second, second.Memory.Length);
    }
}
