using System.Buffers.Binary;
using System.Security.Cryptography;
using Courier.Storage.Encryption;

namespace Courier.Storage.FileStorage;

/// <summary>
/// Encryption at rest (<see cref="FileStoreOptions.Encryption"/>): each record is sealed on its own
/// with the store's data key, so a record is still read with one positional read and decrypted alone,
/// and every write stays an append (a sealed record is never rewritten but by erase). On disk:
/// <code>
/// 0    u32  L, the record's length on disk (the plain record + 32)
/// 4    12   nonce
/// 16   L-32 the plain record (<see cref="RecordFormat"/>), encrypted
/// L-16 16   tag; the 4 length bytes are authenticated with it
/// </code>
/// In the write block's buffer a record sits at the same offsets in plaintext (the length, 12 unused
/// bytes, the plain record, 16 unused bytes), so offsets, sizes and reads of buffered records are those
/// of the file; <see cref="Flush"/> seals the batch into a second buffer on its way to the file. Block
/// headers stay plaintext (magic, id, floor: no message data); index files are sealed whole.
/// </summary>
/// <remarks>
/// Nonces: a 96-bit counter starting at a random value at each open, so a batch costs no random
/// numbers and two opens would have to pick overlapping ranges of 2^96 to repeat one. Hot path: one
/// AEAD call per record of a flushed batch, no allocation (the seal buffer grows with the largest batch).
/// </remarks>
internal sealed partial class FileStore
{
    private const int SealPrefix = 4 + Aead.NonceSize;                    // length + nonce before the plain record
    private const int SealOverhead = SealPrefix + Aead.TagSize;           // 32 bytes per record on disk
    private const int MaxKeptSealBuffer = 4 * 1024 * 1024;                // bytes; a larger seal buffer is dropped after its write (as MsgBlock's buffers)

    private Aead? _key;            // the store's data key; null: plaintext
    private int _sealOverhead;     // 0, or SealOverhead when encrypted
    private byte[] _sealBuffer = []; // the batch being written, sealed; I/O gate held
    private byte[] _readPlain = [];  // a decrypted record being served; state lock held
    private ulong _nonceLow;         // the next nonce (low 64 bits); I/O gate held
    private uint _nonceHigh;         // its high 32 bits

    /// <summary>
    /// Opens or creates <c>store.key</c> when encryption is configured or the store is encrypted. A store
    /// written without a key and opened with one is encrypted first, as nats-server does ("Encrypting
    /// stream"): see <see cref="EncryptExisting"/>.
    /// </summary>
    private void LoadKey(StoreConfig config)
    {
        var context = _options.EncryptionContext ?? config.Name;
        var keyFile = Path.Combine(_directory, StoreKeyFile.FileName);
        if (_options.Encryption is { } encryption && _fs.ReadAllBytes(keyFile) is null && _fs.ListFiles(_directory, "*.blk").Count > 0)
        {
            EncryptExisting(encryption, context);
        }

        _key = StoreKeyFile.Load(_fs, _directory, _options.Encryption, context, create: true);
        if (_key is not null && _fs.ListFiles(_directory, "*" + SealedBlockExtension).Count > 0)
        {
            FinishEncrypting(); // a crash came after the key file was written: the sealed blocks are the store
        }

        if (_key is not null)
        {
            _sealOverhead = SealOverhead;
            Span<byte> start = stackalloc byte[12];
            RandomNumberGenerator.Fill(start);
            _nonceLow = BinaryPrimitives.ReadUInt64LittleEndian(start);
            _nonceHigh = BinaryPrimitives.ReadUInt32LittleEndian(start[8..]);
        }
    }

    private const string SealedBlockExtension = ".sealed"; // a block written encrypted, waiting to replace its plaintext file

    /// <summary>
    /// Encrypts a store written without a key: each block's valid records (a plaintext scan, as recovery
    /// does; damaged bytes are left out) are sealed into <c>NNNNNNNNNN.sealed</c>, synced; then the key
    /// file is written, which commits the change; then the sealed files replace the blocks and the
    /// plaintext index files are deleted (<see cref="FinishEncrypting"/>). A crash before the key file
    /// leaves the plaintext store (the next open starts over); after it, the next open finishes.
    /// The old blocks' disk space is freed by the file system, not overwritten.
    /// </summary>
    private void EncryptExisting(StoreEncryption encryption, string context)
    {
        foreach (var stale in _fs.ListFiles(_directory, "*" + SealedBlockExtension))
        {
            _fs.Delete(stale); // an earlier attempt that never wrote its key file
        }

        using var key = StoreKeyFile.Generate(encryption, context, out var keyFile);
        Span<byte> start = stackalloc byte[12];
        RandomNumberGenerator.Fill(start);
        _nonceLow = BinaryPrimitives.ReadUInt64LittleEndian(start);
        _nonceHigh = BinaryPrimitives.ReadUInt32LittleEndian(start[8..]);
        foreach (var path in _fs.ListFiles(_directory, "*.blk"))
        {
            if (!uint.TryParse(Path.GetFileNameWithoutExtension(path), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var id))
            {
                continue;
            }

            var data = _fs.ReadAllBytes(path) ?? [];
            if (data.Length < BlockHeader.Size)
            {
                continue; // recovery removes it
            }

            var entries = new List<IndexEntry>();
            ScanBuffer(new MsgBlock(_fs, _directory, id), BlockHeader.Size, data.AsSpan(BlockHeader.Size), entries, claims: null, report: false); // _key is null: a plaintext scan
            var size = (long)BlockHeader.Size;
            foreach (var e in entries)
            {
                size += e.Length + SealOverhead;
            }

            var sealedBlock = new byte[size];
            data.AsSpan(0, BlockHeader.Size).CopyTo(sealedBlock);
            var at = BlockHeader.Size;
            foreach (var e in entries)
            {
                var length = (int)e.Length + SealOverhead;
                SealRecord(key, data.AsSpan((int)e.Offset, (int)e.Length), sealedBlock.AsSpan(at, length));
                at += length;
            }

            using var file = _fs.Open(Path.ChangeExtension(path, SealedBlockExtension), FileMode.Create);
            file.Write(sealedBlock, 0);
            file.Sync();
        }

        StoreKeyFile.Write(_fs, _directory, keyFile); // the commit point
    }

    /// <summary>The sealed blocks replace the plaintext ones; the plaintext index files go (scans rebuild them sealed).</summary>
    private void FinishEncrypting()
    {
        foreach (var path in _fs.ListFiles(_directory, "*" + SealedBlockExtension))
        {
            _fs.Move(path, Path.ChangeExtension(path, ".blk"));
        }

        foreach (var index in _fs.ListFiles(_directory, "*.idx"))
        {
            _fs.Delete(index);
        }

        _fs.SyncDirectory(_directory);
    }

    /// <summary>Room for a record of plain size <paramref name="size"/> in <paramref name="block"/>'s buffer; returns the span the plain record goes in. Lock held.</summary>
    private Span<byte> ReserveRecord(MsgBlock block, uint size)
    {
        var span = block.Reserve((int)size + _sealOverhead);
        if (_sealOverhead == 0)
        {
            return span;
        }

        BinaryPrimitives.WriteUInt32LittleEndian(span, (uint)span.Length);
        return span[SealPrefix..^Aead.TagSize];
    }

    /// <summary>Writes the block's in-flight bytes to its file, sealing each record when encrypted. I/O gate held.</summary>
    private void WriteInflight(MsgBlock block)
    {
        var data = block.Inflight.AsSpan(0, block.InflightLength);
        if (_key is null)
        {
            block.Handle.Write(data, block.InflightStart);
            return;
        }

        block.Handle.Write(SealRecords(data, block.InflightStart), block.InflightStart);
        if (_sealBuffer.Length > MaxKeptSealBuffer)
        {
            _sealBuffer = []; // one unusually large batch does not keep its buffer
        }
    }

    /// <summary>The buffered records of [offset, offset + plain.Length) sealed (a block's header, at offset 0, copied as is). I/O gate held.</summary>
    private ReadOnlySpan<byte> SealRecords(ReadOnlySpan<byte> plain, long offset)
    {
        if (_sealBuffer.Length < plain.Length)
        {
            _sealBuffer = GC.AllocateUninitializedArray<byte>(Math.Max(plain.Length, 64 * 1024));
        }

        var sealedBytes = _sealBuffer.AsSpan(0, plain.Length);
        var p = 0;
        if (offset == 0)
        {
            plain[..BlockHeader.Size].CopyTo(sealedBytes);
            p = BlockHeader.Size;
        }

        while (p < plain.Length)
        {
            var length = (int)BinaryPrimitives.ReadUInt32LittleEndian(plain[p..]);
            SealRecord(_key!, plain.Slice(p + SealPrefix, length - SealOverhead), sealedBytes.Slice(p, length));
            p += length;
        }

        return sealedBytes;
    }

    /// <summary>Seals one plain record into <paramref name="destination"/> (its length on disk) with <paramref name="key"/>. I/O gate held.</summary>
    private void SealRecord(Aead key, ReadOnlySpan<byte> record, Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(destination, (uint)destination.Length);
        var nonce = destination.Slice(4, Aead.NonceSize);
        BinaryPrimitives.WriteUInt64LittleEndian(nonce, _nonceLow);
        BinaryPrimitives.WriteUInt32LittleEndian(nonce[8..], _nonceHigh);
        if (++_nonceLow == 0)
        {
            _nonceHigh++;
        }

        key.Seal(nonce, record, destination.Slice(SealPrefix, record.Length), destination[^Aead.TagSize..], destination[..4]);
    }

    /// <summary>
    /// The plain record of a stored one: of a buffered record (plaintext, at its file layout) the middle;
    /// of bytes from the file the decryption, into <paramref name="scratch"/>. False when the length or
    /// the tag does not match (damage, or bytes that are no record).
    /// </summary>
    private bool TryUnseal(ReadOnlySpan<byte> stored, bool buffered, ref byte[] scratch, out ReadOnlySpan<byte> record)
    {
        record = default;
        if (stored.Length < SealOverhead + RecordFormat.Overhead)
        {
            return false;
        }

        if (buffered)
        {
            record = stored[SealPrefix..^Aead.TagSize];
            return true;
        }

        if (BinaryPrimitives.ReadUInt32LittleEndian(stored) != stored.Length)
        {
            return false;
        }

        var length = stored.Length - SealOverhead;
        if (scratch.Length < length)
        {
            scratch = new byte[Math.Max(length, 1024)];
        }

        var plain = scratch.AsSpan(0, length);
        if (!_key!.TryOpen(stored.Slice(4, Aead.NonceSize), stored.Slice(SealPrefix, length), stored[^Aead.TagSize..], plain, stored[..4]))
        {
            return false;
        }

        record = plain;
        return true;
    }

    /// <summary>
    /// Whether a whole valid record starts at <paramref name="rest"/>[0] in a block file: its header,
    /// its plain bytes (decrypted into <paramref name="scratch"/> when encrypted) and its length on disk.
    /// </summary>
    private bool TryRecordAt(ReadOnlySpan<byte> rest, ref byte[] scratch, out RecordHeader header, out ReadOnlySpan<byte> record, out int stored)
    {
        if (_key is null)
        {
            var ok = RecordFormat.IsValidAt(rest, MaxRecordSize, out header);
            stored = ok ? (int)header.Length : 0;
            record = ok ? rest[..stored] : default;
            return ok;
        }

        header = default;
        record = default;
        stored = 0;
        if (rest.Length < SealOverhead + RecordFormat.Overhead)
        {
            return false;
        }

        var length = BinaryPrimitives.ReadUInt32LittleEndian(rest);
        if (length < SealOverhead + RecordFormat.Overhead || length > rest.Length || length > MaxRecordSize + SealOverhead
            || !TryUnseal(rest[..(int)length], buffered: false, ref scratch, out record)
            || !RecordFormat.IsValidAt(record, record.Length, out header) || header.Length != record.Length)
        {
            record = default;
            return false;
        }

        stored = (int)length;
        return true;
    }
}
