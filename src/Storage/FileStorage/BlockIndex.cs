using System.Buffers;
using System.Buffers.Binary;
using Courier.Protocols.Subjects;
using Courier.Storage.Encryption;
using Courier.Storage.Internal;
using Courier.Storage.IO;

namespace Courier.Storage.FileStorage;

/// <summary>One record of a block as its index file lists it.</summary>
internal struct IndexEntry
{
    public uint Offset;
    public uint Length;
    public ulong Sequence;
    public long Timestamp;  // floor records: the stream's last timestamp
    public ulong Aux;       // floor records: the stream's last sequence
    public byte[]? Subject; // messages only
    public RecordKind Kind;
}

/// <summary>
/// A block's index file (<c>NNNNNNNNNN.idx</c>): every record of the block without its payload, so a
/// restart rebuilds the in-memory state without reading message bytes. Little-endian:
/// <code>
/// 0   u32  magic "CIDX"
/// 4   u8   version (2)
/// 5   u8[3] reserved
/// 8   u32  block id
/// 12  u32  reserved
/// 16  N x 40 bytes: u32 offset, u32 length, u64 sequence, i64 timestamp, u64 aux,
///                   i32 subject index (-1: none), u8 kind, u8[3] reserved
///                   (floor records: timestamp and aux are the last timestamp and last sequence)
/// ..  K x (u16 length, bytes)        the distinct subjects, in order of first use
/// ..  u64 covered length (the block file bytes the entries describe), u32 N, u32 K, u64 reserved
/// end u32  CRC-32C of everything before it
/// </code>
/// Entries ascend by offset and do not overlap; bytes between them (a damaged record found by a
/// scan) are skipped. Written as a stream (to a temporary file, then renamed) when a block is
/// sealed and, for the write block, on Stop. Not fsynced: a missing or damaged index only costs a
/// scan of its block.
/// </summary>
internal static class BlockIndex
{
    private const uint Magic = 0x58444943; // "CIDX" read as little-endian
    private const byte Version = 2;
    private const int HeaderSize = 16;
    private const int EntrySize = 40;
    private const int FooterSize = 24;

    /// <summary>Writes an index from a list of entries.</summary>
    public static void Write(StoreFileSystem fs, string path, uint blockId, long coveredLength, IReadOnlyList<IndexEntry> entries, Aead? key)
    {
        using var writer = new Writer(fs, path, blockId, key);
        foreach (var e in entries)
        {
            writer.Add(e.Offset, e.Length, e.Sequence, e.Timestamp, e.Aux, e.Subject, e.Kind);
        }

        writer.Complete(coveredLength);
    }

    /// <summary>
    /// Reads and checks an index against its block. Returns false with a null
    /// <paramref name="problem"/> when there is no index file, with a reason when it is unusable.
    /// </summary>
    public static bool TryRead(StoreFileSystem fs, string path, uint blockId, long blockFileLength, Aead? key, out List<IndexEntry> entries, out long coveredLength, out string? problem)
    {
        entries = [];
        coveredLength = 0;
        problem = null;
        var buffer = fs.ReadAllBytes(path);
        if (buffer is null)
        {
            return false;
        }

        if (key is not null && (buffer = SealedFile.TryOpen(key, buffer)) is null)
        {
            problem = "cannot be decrypted";
            return false;
        }

        var b = (ReadOnlySpan<byte>)buffer;
        if (b.Length < HeaderSize + FooterSize + 4
            || BinaryPrimitives.ReadUInt32LittleEndian(b) != Magic
            || b[4] != Version
            || BinaryPrimitives.ReadUInt32LittleEndian(b[^4..]) != Crc32C.Compute(b[..^4]))
        {
            problem = "bad magic, version or checksum";
            return false;
        }

        if (BinaryPrimitives.ReadUInt32LittleEndian(b[8..]) != blockId)
        {
            problem = "index of another block";
            return false;
        }

        var footer = b[^(FooterSize + 4)..];
        coveredLength = BinaryPrimitives.ReadInt64LittleEndian(footer);
        var count = BinaryPrimitives.ReadUInt32LittleEndian(footer[8..]);
        var subjectCount = BinaryPrimitives.ReadUInt32LittleEndian(footer[12..]);
        if (coveredLength < BlockHeader.Size || coveredLength > blockFileLength)
        {
            problem = $"covers {coveredLength} bytes but the block has {blockFileLength}";
            return false;
        }

        var subjectsAt = HeaderSize + ((long)count * EntrySize);
        var subjectsEnd = b.Length - FooterSize - 4;
        if (subjectsAt > subjectsEnd)
        {
            problem = "entry count does not match the file size";
            return false;
        }

        var subjects = new byte[subjectCount][];
        var at = (int)subjectsAt;
        for (var i = 0; i < subjectCount; i++)
        {
            if (at + 2 > subjectsEnd || at + 2 + BinaryPrimitives.ReadUInt16LittleEndian(b[at..]) > subjectsEnd)
            {
                problem = "subject table overruns the file";
                return false;
            }

            var length = BinaryPrimitives.ReadUInt16LittleEndian(b[at..]);
            subjects[i] = b.Slice(at + 2, length).ToArray();
            at += 2 + length;
        }

        if (at != subjectsEnd)
        {
            problem = "subject table does not match the file size";
            return false;
        }

        entries = new List<IndexEntry>((int)count);
        long end = BlockHeader.Size;
        at = HeaderSize;
        for (var i = 0; i < count; i++, at += EntrySize)
        {
            var d = b[at..];
            var e = new IndexEntry
            {
                Offset = BinaryPrimitives.ReadUInt32LittleEndian(d),
                Length = BinaryPrimitives.ReadUInt32LittleEndian(d[4..]),
                Sequence = BinaryPrimitives.ReadUInt64LittleEndian(d[8..]),
                Timestamp = BinaryPrimitives.ReadInt64LittleEndian(d[16..]),
                Aux = BinaryPrimitives.ReadUInt64LittleEndian(d[24..]),
                Kind = (RecordKind)d[36],
            };
            var subject = BinaryPrimitives.ReadInt32LittleEndian(d[32..]);
            if (e.Offset < end || e.Length < RecordFormat.Overhead || e.Kind is < RecordKind.Message or > RecordKind.Erased
                || (e.Kind == RecordKind.Message && (uint)subject >= subjectCount))
            {
                problem = $"entry {i} is inconsistent";
                entries = [];
                return false;
            }

            e.Subject = subject >= 0 && subject < subjectCount ? subjects[subject] : null;
            entries.Add(e);
            end = (long)e.Offset + e.Length;
        }

        if (end > coveredLength)
        {
            problem = "entries run past the covered length";
            entries = [];
            return false;
        }

        return true;
    }

    /// <summary>Writes an index file as a stream: entries as they come, then the subjects and the footer.</summary>
    internal sealed class Writer : IDisposable
    {
        private const int BufferSize = 64 * 1024; // bytes

        private readonly string _path;
        private readonly string _temporary;
        private readonly StoreFileSystem _fs;
        private readonly StoreFile _file;
        private readonly Aead? _key;
        private readonly ArrayBufferWriter<byte>? _plain; // encrypted: the whole index, sealed at the end
        private readonly byte[] _buffer = new byte[BufferSize];
        private readonly Dictionary<byte[], int> _subjectIds = new(SubjectBytesComparer.Instance);
        private readonly Dictionary<byte[], int>.AlternateLookup<ReadOnlySpan<byte>> _subjectLookup;
        private readonly List<byte[]> _subjects = [];
        private int _length;
        private long _written;
        private uint _crc = Crc32C.Start;
        private uint _count;
        private bool _completed;

        /// <param name="fs">The file system.</param>
        /// <param name="path">The index file.</param>
        /// <param name="blockId">Its block.</param>
        /// <param name="key">The store's data key: the index is collected and written sealed at <see cref="Complete"/>; null: streamed in plaintext.</param>
        public Writer(StoreFileSystem fs, string path, uint blockId, Aead? key)
        {
            _fs = fs;
            _key = key;
            _plain = key is null ? null : new ArrayBufferWriter<byte>(BufferSize);
            _path = path;
            _temporary = path + ".tmp";
            _subjectLookup = _subjectIds.GetAlternateLookup<ReadOnlySpan<byte>>();
            _file = fs.Open(_temporary, FileMode.Create);
            var h = Reserve(HeaderSize);
            h.Clear();
            BinaryPrimitives.WriteUInt32LittleEndian(h, Magic);
            h[4] = Version;
            BinaryPrimitives.WriteUInt32LittleEndian(h[8..], blockId);
        }

        public void Add(uint offset, uint length, ulong seq, long timestamp, ulong aux, ReadOnlySpan<byte> subject, RecordKind kind)
        {
            var subjectId = -1;
            if (kind == RecordKind.Message && !_subjectLookup.TryGetValue(subject, out subjectId))
            {
                subjectId = _subjects.Count;
                var key = subject.ToArray();
                _subjectIds[key] = subjectId;
                _subjects.Add(key);
            }

            var d = Reserve(EntrySize);
            BinaryPrimitives.WriteUInt32LittleEndian(d, offset);
            BinaryPrimitives.WriteUInt32LittleEndian(d[4..], length);
            BinaryPrimitives.WriteUInt64LittleEndian(d[8..], seq);
            BinaryPrimitives.WriteInt64LittleEndian(d[16..], timestamp);
            BinaryPrimitives.WriteUInt64LittleEndian(d[24..], aux);
            BinaryPrimitives.WriteInt32LittleEndian(d[32..], subjectId);
            d[36] = (byte)kind;
            d[37] = d[38] = d[39] = 0;
            _count++;
        }

        public void Complete(long coveredLength)
        {
            foreach (var s in _subjects)
            {
                var d = Reserve(2 + s.Length);
                BinaryPrimitives.WriteUInt16LittleEndian(d, (ushort)s.Length);
                s.CopyTo(d[2..]);
            }

            var f = Reserve(FooterSize);
            BinaryPrimitives.WriteInt64LittleEndian(f, coveredLength);
            BinaryPrimitives.WriteUInt32LittleEndian(f[8..], _count);
            BinaryPrimitives.WriteUInt32LittleEndian(f[12..], (uint)_subjects.Count);
            BinaryPrimitives.WriteUInt64LittleEndian(f[16..], 0);
            Drain();
            Span<byte> crc = stackalloc byte[4];
            BinaryPrimitives.WriteUInt32LittleEndian(crc, Crc32C.Finish(_crc));
            if (_plain is not null)
            {
                _plain.Write(crc);
                _file.Write(SealedFile.Seal(_key!, _plain.WrittenSpan), 0);
            }
            else
            {
                _file.Write(crc, _written);
            }

            _file.Dispose();
            _fs.Move(_temporary, _path);
            _completed = true;
        }

        public void Dispose()
        {
            if (!_completed)
            {
                _file.Dispose();
                _fs.Delete(_temporary);
            }
        }

        private Span<byte> Reserve(int size)
        {
            if (_length + size > _buffer.Length)
            {
                Drain();
            }

            if (size > _buffer.Length)
            {
                throw new InvalidOperationException("index item larger than the write buffer");
            }

            var span = _buffer.AsSpan(_length, size);
            _length += size;
            return span;
        }

        private void Drain()
        {
            var data = _buffer.AsSpan(0, _length);
            _crc = Crc32C.Append(_crc, data);
            if (_plain is not null)
            {
                _plain.Write(data);
            }
            else
            {
                _file.Write(data, _written);
            }

            _written += data.Length;
            _length = 0;
        }
    }
}
