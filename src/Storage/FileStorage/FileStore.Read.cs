using Courier.Storage.Internal;
using Courier.Storage.IO;

namespace Courier.Storage.FileStorage;

/// <summary>Reading records back: from the append buffer, from a read window, or with one positional read.</summary>
internal sealed partial class FileStore
{
    private const int WindowSize = 64 * 1024; // bytes read ahead per window: a sequential consumer reads a window per ~hundreds of messages
    private const int WindowCount = 4;        // windows per store (several readers at different places)
    private const int MaxReadHandles = 16;    // sealed blocks kept open for reading; older ones are closed (file descriptors are finite)
    private const int SequentialGap = WindowSize / 4; // bytes: a miss this close after a recent read counts as sequential
    private const int RecentReadCount = 8;    // lone reads remembered, so a reader going forward gets a window on its second read

    private readonly ReadWindow[] _windows = CreateWindows();
    private readonly List<MsgBlock> _readHandles = []; // sealed blocks opened by reads, oldest first
    private readonly (MsgBlock? Block, long End)[] _recentReads = new (MsgBlock?, long)[RecentReadCount];
    private byte[] _lone = [];                         // the last lone read's record (lock held while it is used)
    private int _nextWindow;
    private int _nextRecent;

    /// <inheritdoc/>
    /// <remarks>Verifies the record's checksum, kind, sequence and subject before serving it.</remarks>
    protected override StoredMessage? ReadRecord(ulong seq, in MsgSlot slot, SubjectEntry subject)
    {
        var block = FindBlock(BlockOf(slot.Location));
        if (block is null)
        {
            return null;
        }

        var offset = OffsetOf(slot.Location);
        var length = (int)slot.Size + _sealOverhead;
        byte[]? owned = null;
        var buffered = block.TryGetBuffered(offset, length, out var record);
        if (!buffered && !TryReadWindow(block, offset, length, out record))
        {
            owned = new byte[length];
            if (!ReadExactly(ReadHandle(block), offset, owned))
            {
                return null;
            }

            record = owned;
        }

        if (_key is not null && !TryUnseal(record, buffered, ref _readPlain, out record))
        {
            return null;
        }

        if (record.Length < RecordFormat.Overhead || !RecordFormat.ChecksumOk(record))
        {
            return null;
        }

        var header = RecordFormat.ReadHeader(record);
        if (header.Kind != RecordKind.Message || header.Sequence != seq || header.Length != slot.Size
            || !record.Slice(RecordFormat.HeaderSize, header.SubjectLength).SequenceEqual(subject.Key))
        {
            return null;
        }

        var bodyStart = RecordFormat.HeaderSize + header.SubjectLength;
        var bodyLength = (int)header.HeadersLength + header.PayloadLength;
        var body = bodyLength == 0 ? [] : record.Slice(bodyStart, bodyLength).ToArray();
        var headersLength = (int)header.HeadersLength;
        return new StoredMessage(subject.Text, body.AsMemory(0, headersLength), body.AsMemory(headersLength), seq, header.Timestamp);
    }

    /// <summary>
    /// Serves [offset, offset + length) from a read window. On a miss, a read that goes on from a
    /// recent one (a consumer walking the stream) fills a window with the next 64 KiB; a lone read (a KV
    /// get, a message by sequence) reads just the record, so it neither pays for 64 KiB nor evicts a
    /// window a sequential reader is using. Lock held; the span is valid until the next read.
    /// </summary>
    private bool TryReadWindow(MsgBlock block, long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        foreach (var w in _windows)
        {
            if (w.Block == block && offset >= w.Start && offset + length <= w.Start + w.Length)
            {
                bytes = w.Data.AsSpan((int)(offset - w.Start), length);
                return true;
            }
        }

        bytes = default;
        if (length > WindowSize)
        {
            return false;
        }

        // Only bytes already in the file: anything newer is still buffered.
        var available = block.FileLength - offset;
        if (available < length)
        {
            return false;
        }

        if (!LooksSequential(block, offset))
        {
            if (_lone.Length < length)
            {
                _lone = new byte[Math.Max(length, 1024)];
            }

            if (!ReadExactly(ReadHandle(block), offset, _lone.AsSpan(0, length)))
            {
                return false;
            }

            _recentReads[_nextRecent] = (block, offset + length);
            _nextRecent = (_nextRecent + 1) % RecentReadCount;
            bytes = _lone.AsSpan(0, length);
            return true;
        }

        var window = _windows[_nextWindow];
        _nextWindow = (_nextWindow + 1) % WindowCount;
        var toRead = (int)Math.Min(WindowSize, available);
        window.Block = null;
        var read = ReadHandle(block).Read(window.Data.AsSpan(0, toRead), offset);
        if (read < length)
        {
            return false;
        }

        window.Block = block;
        window.Start = offset;
        window.Length = read;
        bytes = window.Data.AsSpan(0, length);
        return true;
    }

    /// <summary>True when <paramref name="offset"/> is at or shortly after the end of a window or a recent lone read of the block. Lock held.</summary>
    private bool LooksSequential(MsgBlock block, long offset)
    {
        foreach (var w in _windows)
        {
            if (w.Block == block && offset >= w.Start && offset - (w.Start + w.Length) < SequentialGap)
            {
                return true;
            }
        }

        foreach (var (b, end) in _recentReads)
        {
            if (b == block && offset >= end && offset - end < SequentialGap)
            {
                return true;
            }
        }

        return false;
    }

    private static bool ReadExactly(StoreFile handle, long offset, Span<byte> destination)
    {
        var done = 0;
        while (done < destination.Length)
        {
            var n = handle.Read(destination[done..], offset + done);
            if (n <= 0)
            {
                return false;
            }

            done += n;
        }

        return true;
    }

    /// <summary>
    /// The block's handle for a read. Blocks opened for reading are closed again, oldest first, beyond
    /// <see cref="MaxReadHandles"/>; a block still being written or synced never is. Lock held.
    /// </summary>
    private StoreFile ReadHandle(MsgBlock block)
    {
        if (!block.HasHandle)
        {
            _readHandles.Add(block);
            if (_readHandles.Count > MaxReadHandles)
            {
                var oldest = _readHandles[0];
                _readHandles.RemoveAt(0);
                if (Closable(oldest))
                {
                    oldest.CloseHandle();
                }
            }
        }

        return block.Handle;
    }

    /// <summary>Closes a sealed block's handle once nothing writes or syncs through it (reads reopen it). Lock held.</summary>
    private void ReleaseHandle(MsgBlock block)
    {
        _readHandles.Remove(block);
        if (Closable(block))
        {
            block.CloseHandle();
        }
    }

    private bool Closable(MsgBlock block) =>
        block != _write && block.Sealed && block.BufferLength == 0 && block.Inflight is null && !block.Unsynced;

    /// <summary>Forgets windows over <paramref name="block"/> (all when null): its file changed or went. Lock held.</summary>
    private void InvalidateWindows(MsgBlock? block)
    {
        foreach (var w in _windows)
        {
            if (block is null || w.Block == block)
            {
                w.Block = null;
            }
        }

        for (var i = 0; i < _recentReads.Length; i++)
        {
            if (block is null || _recentReads[i].Block == block)
            {
                _recentReads[i] = default;
            }
        }
    }

    private static ReadWindow[] CreateWindows()
    {
        var windows = new ReadWindow[WindowCount];
        for (var i = 0; i < windows.Length; i++)
        {
            windows[i] = new ReadWindow();
        }

        return windows;
    }

    /// <summary>A copy of some flushed bytes of one block.</summary>
    private sealed class ReadWindow
    {
        public MsgBlock? Block;
        public long Start;
        public int Length;

        public byte[] Data => field ??= new byte[WindowSize];
    }
}
