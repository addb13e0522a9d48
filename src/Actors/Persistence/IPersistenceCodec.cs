using System.Buffers;

namespace Courier.Actors.Persistence;

/// <summary>
/// Turns one event or snapshot type into bytes and back (the part of an Akka.NET <c>Serializer</c> that
/// persistence needs). Register one per type on <see cref="PersistenceSerialization"/>; write compact binary,
/// not JSON, for high-rate events.
/// </summary>
/// <remarks>Keep it stateless: the journal actor, the snapshot-store actor and replays on the thread pool call
/// it concurrently.</remarks>
/// <typeparam name="T">The type it handles (and, unless registered separately, its subtypes).</typeparam>
public interface IPersistenceCodec<T>
{
    /// <summary>Writes <paramref name="value"/> to <paramref name="output"/> (the journal's batch buffer: write, don't keep it).</summary>
    void Write(T value, IBufferWriter<byte> output);

    /// <summary>Reads a value back. <paramref name="bytes"/> is the reader's own (it may keep slices of it).</summary>
    T Read(ReadOnlyMemory<byte> bytes);
}
