using System.Buffers.Binary;

namespace Courier.Raft;

/// <summary>The kind of a single-server membership change.</summary>
public enum ConfChangeKind : byte
{
    /// <summary>Add a voter, or promote a learner to voter.</summary>
    AddVoter = 1,
    /// <summary>Add a non-voting member that receives the log (a new replica catching up).</summary>
    AddLearner = 2,
    /// <summary>Remove a voter or learner.</summary>
    Remove = 3,
}

/// <summary>
/// One membership change (Raft dissertation §4.1: one server at a time, so any old and new majority
/// overlap). It takes effect when its entry is applied; the leader accepts the next one only after
/// that, and only once it has applied everything up to its own no-op (the fix for the
/// single-server-change bug Ongaro described in 2015).
/// </summary>
public readonly record struct ConfChange(ConfChangeKind Kind, ulong Node)
{
    internal const int EncodedLength = 9; // bytes: kind, node id

    internal byte[] Encode()
    {
        var bytes = new byte[EncodedLength];
        bytes[0] = (byte)Kind;
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(1), Node);
        return bytes;
    }

    /// <summary>The change a membership entry's data holds (an applier reading its committed entries).</summary>
    public static ConfChange Decode(ReadOnlySpan<byte> data)
    {
        if (data.Length != EncodedLength || data[0] is < 1 or > 3 || BinaryPrimitives.ReadUInt64LittleEndian(data[1..]) == 0)
            throw new InvalidDataException("malformed membership change entry");
        return new ConfChange((ConfChangeKind)data[0], BinaryPrimitives.ReadUInt64LittleEndian(data[1..]));
    }
}
