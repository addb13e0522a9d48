using System.Buffers.Binary;
using System.Text;

namespace Courier.Storage.Persistence;

/// <summary>
/// How the journal lays its entries into store messages (little-endian). One store message per
/// atomic write, on the subject of its persistence id, so the record's checksum makes the atomic
/// write all-or-nothing even after a torn write:
/// <code>
/// u8 1 (events) | u8 0 | u16 count | i64 lowest seq | i64 highest seq
/// count x ( i64 seq | u8 flags | writer guid: 16 bytes (flag 1) or u16 n + UTF-8 | u16 n + manifest UTF-8
///           | [i64 timestamp (flag 2), when it differs from the message's] | u32 n + payload )
/// </code>
/// A deletion marker, one per persistence id on its marker subject (the newest wins):
/// <code>u8 2 (marker) | u8 0 | u16 0 | i64 deleted-to seq | i64 highest seq</code>
/// </summary>
internal static class JournalCodec
{
    public const byte EventsFormat = 1;
    public const byte MarkerFormat = 2;
    public const int HeaderSize = 20;      // bytes: format, reserved, count, lowest, highest
    public const int MarkerSize = 20;      // bytes: format, reserved, 0, deleted-to, highest
    public const int MaxEvents = ushort.MaxValue; // events per atomic write: the count is a u16

    private const byte BinaryWriter = 1;   // flag: the writer guid is 16 binary bytes
    private const byte OwnTimestamp = 2;   // flag: the event's timestamp differs from the message's
    private const int GuidSize = 16;       // bytes

    /// <summary>The encoded size of <paramref name="write"/>, or -1 if it cannot be encoded (too many events, a field too long).</summary>
    public static long EventsSize(JournalWrite write, long messageTimestamp, long now)
    {
        var records = write.Records;
        if (records.Count > MaxEvents)
        {
            return -1;
        }

        long size = HeaderSize;
        foreach (var r in records)
        {
            var manifest = Encoding.UTF8.GetByteCount(r.Manifest);
            var writer = IsBinaryGuid(r.WriterGuid, out _) ? GuidSize : 2 + Encoding.UTF8.GetByteCount(r.WriterGuid);
            if (manifest > ushort.MaxValue || writer > ushort.MaxValue + 2)
            {
                return -1;
            }

            size += 8 + 1 + writer + 2 + manifest + (EffectiveTimestamp(r, now) != messageTimestamp ? 8 : 0) + 4 + r.Payload.Length;
        }

        return size;
    }

    /// <summary>Encodes <paramref name="write"/> into exactly <see cref="EventsSize"/> bytes of <paramref name="destination"/>.</summary>
    public static void WriteEvents(Span<byte> destination, JournalWrite write, long messageTimestamp, long now)
    {
        destination[0] = EventsFormat;
        destination[1] = 0;
        BinaryPrimitives.WriteUInt16LittleEndian(destination[2..], (ushort)write.Records.Count);
        BinaryPrimitives.WriteInt64LittleEndian(destination[4..], write.LowestSequenceNr);
        BinaryPrimitives.WriteInt64LittleEndian(destination[12..], write.HighestSequenceNr);
        var p = HeaderSize;
        foreach (var r in write.Records)
        {
            BinaryPrimitives.WriteInt64LittleEndian(destination[p..], r.SequenceNr);
            p += 8;
            var timestamp = EffectiveTimestamp(r, now);
            var flags = (byte)((IsBinaryGuid(r.WriterGuid, out var guid) ? BinaryWriter : 0) | (timestamp != messageTimestamp ? OwnTimestamp : 0));
            destination[p++] = flags;
            if ((flags & BinaryWriter) != 0)
            {
                guid.TryWriteBytes(destination.Slice(p, GuidSize));
                p += GuidSize;
            }
            else
            {
                p += WriteString(destination[p..], r.WriterGuid);
            }

            p += WriteString(destination[p..], r.Manifest);
            if ((flags & OwnTimestamp) != 0)
            {
                BinaryPrimitives.WriteInt64LittleEndian(destination[p..], timestamp);
                p += 8;
            }

            BinaryPrimitives.WriteInt32LittleEndian(destination[p..], r.Payload.Length);
            p += 4;
            r.Payload.Span.CopyTo(destination[p..]);
            p += r.Payload.Length;
        }
    }

    /// <summary>Reads the fixed header of an events message; false if it is not one (or is damaged).</summary>
    public static bool TryReadHeader(ReadOnlySpan<byte> data, out int count, out long lowest, out long highest)
    {
        if (data.Length < HeaderSize || data[0] != EventsFormat)
        {
            count = 0;
            lowest = highest = 0;
            return false;
        }

        count = BinaryPrimitives.ReadUInt16LittleEndian(data[2..]);
        lowest = BinaryPrimitives.ReadInt64LittleEndian(data[4..]);
        highest = BinaryPrimitives.ReadInt64LittleEndian(data[12..]);
        return count > 0 && lowest > 0 && highest >= lowest;
    }

    public static void WriteMarker(Span<byte> destination, long deletedTo, long highest)
    {
        destination[0] = MarkerFormat;
        destination[1] = 0;
        BinaryPrimitives.WriteUInt16LittleEndian(destination[2..], 0);
        BinaryPrimitives.WriteInt64LittleEndian(destination[4..], deletedTo);
        BinaryPrimitives.WriteInt64LittleEndian(destination[12..], highest);
    }

    public static bool TryReadMarker(ReadOnlySpan<byte> data, out long deletedTo, out long highest)
    {
        if (data.Length < MarkerSize || data[0] != MarkerFormat)
        {
            deletedTo = highest = 0;
            return false;
        }

        deletedTo = BinaryPrimitives.ReadInt64LittleEndian(data[4..]);
        highest = BinaryPrimitives.ReadInt64LittleEndian(data[12..]);
        return true;
    }

    /// <summary>The timestamp the journal stores for <paramref name="record"/>: its own, or <paramref name="now"/> when it has none.</summary>
    public static long EffectiveTimestamp(in JournalRecord record, long now) => record.Timestamp != 0 ? record.Timestamp : now;

    /// <summary>True when <paramref name="writer"/> is a lower-case "D" guid, which round-trips through 16 bytes.</summary>
    private static bool IsBinaryGuid(string writer, out Guid guid)
    {
        guid = default;
        if (writer.Length != 36 || !Guid.TryParseExact(writer, "D", out guid))
        {
            return false;
        }

        Span<char> canonical = stackalloc char[36];
        return guid.TryFormat(canonical, out _, "D") && canonical.SequenceEqual(writer);
    }

    private static int WriteString(Span<byte> destination, string value)
    {
        var n = Encoding.UTF8.GetBytes(value, destination[2..]);
        BinaryPrimitives.WriteUInt16LittleEndian(destination, (ushort)n);
        return 2 + n;
    }

    /// <summary>
    /// Decodes the events of one message. Remembers the last manifest and writer it decoded, so a
    /// replay of one actor's events (which share both) allocates neither per event.
    /// </summary>
    public sealed class Reader
    {
        private byte[] _manifestBytes = [];
        private string _manifest = "";
        private Guid _writerGuid;
        private string _writer = "";

        /// <summary>
        /// Calls <paramref name="onEvent"/> for each event of <paramref name="data"/> (an events message
        /// whose header was read) until it returns false. False if the message is malformed.
        /// </summary>
        public bool ReadEvents(string persistenceId, ReadOnlyMemory<byte> data, long messageTimestamp, Func<JournalRecord, bool> onEvent)
        {
            var span = data.Span;
            if (!TryReadHeader(span, out var count, out _, out _))
            {
                return false;
            }

            var p = HeaderSize;
            for (var i = 0; i < count; i++)
            {
                if (!TryRead(data, ref p, persistenceId, messageTimestamp, out var record))
                {
                    return false;
                }

                if (!onEvent(record))
                {
                    return true;
                }
            }

            return true;
        }

        private bool TryRead(ReadOnlyMemory<byte> data, ref int p, string persistenceId, long messageTimestamp, out JournalRecord record)
        {
            record = default;
            var span = data.Span;
            if (span.Length - p < 9)
            {
                return false;
            }

            var seq = BinaryPrimitives.ReadInt64LittleEndian(span[p..]);
            var flags = span[p + 8];
            p += 9;
            string writer;
            if ((flags & BinaryWriter) != 0)
            {
                if (span.Length - p < GuidSize)
                {
                    return false;
                }

                var guid = new Guid(span.Slice(p, GuidSize));
                p += GuidSize;
                if (guid != _writerGuid || _writer.Length == 0)
                {
                    _writerGuid = guid;
                    _writer = guid.ToString("D");
                }

                writer = _writer;
            }
            else if (!TryReadString(span, ref p, out var writerBytes))
            {
                return false;
            }
            else
            {
                writer = Encoding.UTF8.GetString(writerBytes);
            }

            if (!TryReadString(span, ref p, out var manifestBytes))
            {
                return false;
            }

            if (!manifestBytes.SequenceEqual(_manifestBytes))
            {
                _manifestBytes = manifestBytes.ToArray();
                _manifest = Encoding.UTF8.GetString(manifestBytes);
            }

            var timestamp = messageTimestamp;
            if ((flags & OwnTimestamp) != 0)
            {
                if (span.Length - p < 8)
                {
                    return false;
                }

                timestamp = BinaryPrimitives.ReadInt64LittleEndian(span[p..]);
                p += 8;
            }

            if (span.Length - p < 4)
            {
                return false;
            }

            var length = BinaryPrimitives.ReadInt32LittleEndian(span[p..]);
            p += 4;
            if (length < 0 || length > span.Length - p)
            {
                return false;
            }

            record = new JournalRecord(persistenceId, seq, data.Slice(p, length), _manifest, writer, timestamp);
            p += length;
            return true;
        }

        private static bool TryReadString(ReadOnlySpan<byte> span, ref int p, out ReadOnlySpan<byte> value)
        {
            value = default;
            if (span.Length - p < 2)
            {
                return false;
            }

            int n = BinaryPrimitives.ReadUInt16LittleEndian(span[p..]);
            p += 2;
            if (n > span.Length - p)
            {
                return false;
            }

            value = span.Slice(p, n);
            p += n;
            return true;
        }
    }
}
