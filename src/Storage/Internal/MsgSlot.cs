using System.Runtime.InteropServices;

namespace Courier.Storage.Internal;

/// <summary>
/// What a store keeps in memory per sequence (28 bytes). A removed message keeps its slot with
/// <see cref="SubjectId"/> 0 until the front passes it, so per-subject chains stay walkable.
/// </summary>
[StructLayout(LayoutKind.Sequential, Pack = 4)]
internal struct MsgSlot
{
    /// <summary>Unix nanoseconds.</summary>
    public long Timestamp;

    /// <summary>Where the record is: FileStore packs (block id &lt;&lt; 32 | offset); MemoryStore does not use it.</summary>
    public ulong Location;

    /// <summary>The subject's id in the <see cref="SubjectTable"/>; 0 when there is no message at this sequence.</summary>
    public int SubjectId;

    /// <summary>The message's <see cref="IStreamStore.MessageSize"/>.</summary>
    public uint Size;

    /// <summary>Distance to the next message of the same subject when it was appended; 0 when none (or too far).</summary>
    public uint Next;

    public readonly bool IsLive => SubjectId != 0;
}
