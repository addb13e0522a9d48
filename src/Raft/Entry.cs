namespace Courier.Raft;

/// <summary>What a log entry carries: the host's command, or a membership change the core applies itself.</summary>
public enum EntryType : byte
{
    /// <summary>An opaque command for the host's state machine (an empty one is a leader's no-op).</summary>
    Normal = 0,
    /// <summary>A <see cref="ConfChange"/>; takes effect when applied, one at a time.</summary>
    ConfChange = 1,
}

/// <summary>One entry of a group's log. Immutable; <see cref="Data"/> is never copied by the core.</summary>
public readonly record struct Entry(ulong Term, ulong Index, EntryType Type, ReadOnlyMemory<byte> Data)
{
    /// <summary>Bytes this entry counts for when batching (payload plus a fixed header estimate).</summary>
    public int Size => Data.Length + 24; // bytes: term, index, type and length as framed on the wire

    public override string ToString() => $"{Index}@{Term}{(Type == EntryType.ConfChange ? " conf" : "")}({Data.Length} B)";
}
