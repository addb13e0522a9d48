using System.Buffers;
using System.Buffers.Binary;
using System.Text;

namespace Courier.Raft;

/// <summary>
/// The wire form of Raft traffic between two nodes: one frame carries every message of every group
/// from this node to one peer since the last flush (heartbeats of a thousand idle groups are one
/// frame per peer pair). The host sends a frame as one internal message over the route link.
/// </summary>
/// <remarks>
/// <code>
/// frame   = version(1) count(u32) message*
/// message = group-length(u16) group(utf8) type(1) flags(1) from(u64) to(u64) term(u64) log-term(u64)
///           index(u64) commit(u64) reject-hint(u64) entry-count(u32) entry* [snapshot]
/// entry   = term(u64) index(u64) type(1) length(u32) data
/// snapshot= index(u64) term(u64) voters(u32 u64*) learners(u32 u64*) length(u32) data
/// </code>
/// Little-endian. Decoding checks every count and length against the bytes left before it
/// allocates, and entries' data are slices of the frame (no copy).
/// </remarks>
public static class RaftCodec
{
    public const byte Version = 1;
    private const int MessageFixed = 2 + 1 + 1 + 8 * 7 + 4; // bytes after the group name, before entries
    private const int EntryFixed = 8 + 8 + 1 + 4;
    private const byte FlagReject = 1, FlagTransfer = 2, FlagSnapshot = 4, FlagRepairing = 8;

    /// <summary>Bytes <see cref="Write"/> needs for <paramref name="messages"/>.</summary>
    public static int Size(IReadOnlyList<(string Group, RaftMessage Message)> messages)
    {
        var size = 1 + 4;
        foreach (var (group, m) in messages)
        {
            size += MessageFixed + Encoding.UTF8.GetByteCount(group);
            foreach (var e in m.Entries) size += EntryFixed + e.Data.Length;
            if (m.Snapshot is { } s)
                size += 8 + 8 + 4 + 8 * s.Meta.Configuration.Voters.Length + 4 + 8 * s.Meta.Configuration.Learners.Length + 4 + s.Data.Length;
        }
        return size;
    }

    /// <summary>Writes one frame.</summary>
    public static void Write(IBufferWriter<byte> output, IReadOnlyList<(string Group, RaftMessage Message)> messages)
    {
        var span = output.GetSpan(Size(messages));
        var at = 0;
        span[at++] = Version;
        BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)messages.Count);
        at += 4;
        foreach (var (group, m) in messages)
        {
            var name = Encoding.UTF8.GetByteCount(group);
            if (name > ushort.MaxValue) throw new ArgumentException("group name longer than 65,535 bytes");
            BinaryPrimitives.WriteUInt16LittleEndian(span[at..], (ushort)name);
            at += 2;
            at += Encoding.UTF8.GetBytes(group, span[at..]);
            span[at++] = (byte)m.Type;
            span[at++] = (byte)((m.Reject ? FlagReject : 0) | (m.Transfer ? FlagTransfer : 0) | (m.Snapshot is null ? 0 : FlagSnapshot) | (m.Repairing ? FlagRepairing : 0));
            at = U64(span, at, m.From);
            at = U64(span, at, m.To);
            at = U64(span, at, m.Term);
            at = U64(span, at, m.LogTerm);
            at = U64(span, at, m.Index);
            at = U64(span, at, m.Commit);
            at = U64(span, at, m.RejectHint);
            BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)m.Entries.Length);
            at += 4;
            foreach (var e in m.Entries)
            {
                at = U64(span, at, e.Term);
                at = U64(span, at, e.Index);
                span[at++] = (byte)e.Type;
                BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)e.Data.Length);
                at += 4;
                e.Data.Span.CopyTo(span[at..]);
                at += e.Data.Length;
            }
            if (m.Snapshot is { } s)
            {
                at = U64(span, at, s.Meta.Index);
                at = U64(span, at, s.Meta.Term);
                at = Ids(span, at, s.Meta.Configuration.Voters);
                at = Ids(span, at, s.Meta.Configuration.Learners);
                BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)s.Data.Length);
                at += 4;
                s.Data.Span.CopyTo(span[at..]);
                at += s.Data.Length;
            }
        }
        output.Advance(at);
    }

    private static int U64(Span<byte> span, int at, ulong value)
    {
        BinaryPrimitives.WriteUInt64LittleEndian(span[at..], value);
        return at + 8;
    }

    private static int Ids(Span<byte> span, int at, ulong[] ids)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)ids.Length);
        at += 4;
        foreach (var id in ids) at = U64(span, at, id);
        return at;
    }

    /// <summary>Reads one frame; entries and snapshot data are slices of <paramref name="frame"/>. Malformed input: <see cref="InvalidDataException"/>.</summary>
    public static List<(string Group, RaftMessage Message)> Read(ReadOnlyMemory<byte> frame)
    {
        var r = new Reader(frame);
        if (r.Byte() != Version) throw new InvalidDataException("unknown raft frame version");
        var count = r.Count(MessageFixed);
        var messages = new List<(string, RaftMessage)>(count);
        for (var i = 0; i < count; i++)
        {
            var group = r.Utf8(r.U16());
            var type = r.Byte();
            if (type is < (byte)MessageType.Append or > (byte)MessageType.TimeoutNow) throw new InvalidDataException($"unknown raft message type {type}");
            var flags = r.Byte();
            if ((flags & ~(FlagReject | FlagTransfer | FlagSnapshot | FlagRepairing)) != 0) throw new InvalidDataException("unknown raft message flags");
            ulong from = r.U64(), to = r.U64(), term = r.U64(), logTerm = r.U64(), index = r.U64(), commit = r.U64(), hint = r.U64();
            var entries = new Entry[r.Count(EntryFixed)];
            for (var e = 0; e < entries.Length; e++)
            {
                ulong entryTerm = r.U64(), entryIndex = r.U64();
                var entryType = r.Byte();
                if (entryType > (byte)EntryType.ConfChange) throw new InvalidDataException($"unknown raft entry type {entryType}");
                entries[e] = new Entry(entryTerm, entryIndex, (EntryType)entryType, r.Bytes(r.Length()));
            }
            Snapshot? snapshot = null;
            if ((flags & FlagSnapshot) != 0)
            {
                ulong snapIndex = r.U64(), snapTerm = r.U64();
                var voters = r.Ids();
                var learners = r.Ids();
                snapshot = new Snapshot(new SnapshotMeta(snapIndex, snapTerm, new Configuration(voters, learners)), r.Bytes(r.Length()));
            }
            messages.Add((group, new RaftMessage
            {
                Type = (MessageType)type,
                From = from,
                To = to,
                Term = term,
                LogTerm = logTerm,
                Index = index,
                Commit = commit,
                RejectHint = hint,
                Reject = (flags & FlagReject) != 0,
                Transfer = (flags & FlagTransfer) != 0,
                Repairing = (flags & FlagRepairing) != 0,
                Entries = entries,
                Snapshot = snapshot,
            }));
        }
        if (!r.AtEnd) throw new InvalidDataException("bytes after the last raft message");
        return messages;
    }

    private struct Reader(ReadOnlyMemory<byte> frame)
    {
        private int _at;

        public readonly bool AtEnd => _at == frame.Length;

        private ReadOnlySpan<byte> Take(int n)
        {
            if (n < 0 || frame.Length - _at < n) throw new InvalidDataException("raft frame cut short");
            var span = frame.Span.Slice(_at, n);
            _at += n;
            return span;
        }

        public byte Byte() => Take(1)[0];
        public ushort U16() => BinaryPrimitives.ReadUInt16LittleEndian(Take(2));
        public ulong U64() => BinaryPrimitives.ReadUInt64LittleEndian(Take(8));

        /// <summary>A length, checked against the bytes left.</summary>
        public int Length()
        {
            var n = BinaryPrimitives.ReadUInt32LittleEndian(Take(4));
            if (n > (uint)(frame.Length - _at)) throw new InvalidDataException("raft length beyond the frame");
            return (int)n;
        }

        /// <summary>A count of items at least <paramref name="minSize"/> bytes each, checked against the bytes left.</summary>
        public int Count(int minSize)
        {
            var n = BinaryPrimitives.ReadUInt32LittleEndian(Take(4));
            if (n > (uint)((frame.Length - _at) / minSize)) throw new InvalidDataException("raft count beyond the frame");
            return (int)n;
        }

        public ReadOnlyMemory<byte> Bytes(int n)
        {
            Take(n);
            return frame.Slice(_at - n, n);
        }

        public string Utf8(int n)
        {
            try
            {
                return new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(Take(n));
            }
            catch (DecoderFallbackException)
            {
                throw new InvalidDataException("raft group name is not UTF-8");
            }
        }

        public ulong[] Ids()
        {
            var ids = new ulong[Count(8)];
            for (var i = 0; i < ids.Length; i++) ids[i] = U64();
            return ids;
        }
    }
}
