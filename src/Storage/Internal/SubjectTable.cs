using System.Text;
using Courier.Protocols.Subjects;

namespace Courier.Storage.Internal;

/// <summary>Per-subject state of one subject: how many messages, the first and the last.</summary>
internal sealed class SubjectEntry
{
    private string? _text;

    public SubjectEntry(byte[] key, int id)
    {
        Key = key;
        Id = id;
    }

    /// <summary>The subject's UTF-8 bytes (also the table key; never mutated).</summary>
    public byte[] Key { get; }

    /// <summary>The id stored in each message slot of this subject.</summary>
    public int Id { get; }

    /// <summary>The subject as a string, made once and shared by every read.</summary>
    public string Text => _text ??= Encoding.UTF8.GetString(Key);

    public ulong Msgs;
    public ulong First;
    public ulong Last;
}

/// <summary>
/// The subjects that have messages, each with a small integer id (slots store the id, not the
/// subject). Lookups by UTF-8 span allocate nothing; ids of subjects that empty are reused.
/// </summary>
internal sealed class SubjectTable
{
    private readonly Dictionary<byte[], SubjectEntry> _byKey = new(SubjectBytesComparer.Instance);
    private readonly Dictionary<byte[], SubjectEntry>.AlternateLookup<ReadOnlySpan<byte>> _bySpan;
    private readonly Stack<int> _freeIds = new();
    private SubjectEntry?[] _byId = new SubjectEntry?[16]; // id 0 is "no subject"
    private int _nextId = 1;

    public SubjectTable() => _bySpan = _byKey.GetAlternateLookup<ReadOnlySpan<byte>>();

    /// <summary>Subjects with at least one message.</summary>
    public int Count => _byKey.Count;

    /// <summary>One past the highest id handed out (for iteration by id).</summary>
    public int IdLimit => _nextId;

    /// <summary>The entry of a live id, or null.</summary>
    public SubjectEntry? this[int id] => (uint)id < (uint)_nextId ? _byId[id] : null;

    /// <summary>The entry for <paramref name="subject"/>, or null.</summary>
    public SubjectEntry? Find(ReadOnlySpan<byte> subject) => _bySpan.TryGetValue(subject, out var e) ? e : null;

    /// <summary>A new entry for a subject not in the table (copies the key).</summary>
    public SubjectEntry Add(ReadOnlySpan<byte> subject) => Add(subject.ToArray());

    /// <summary>A new entry that takes <paramref name="key"/> as its key (must not be mutated later).</summary>
    public SubjectEntry Add(byte[] key)
    {
        var id = _freeIds.Count > 0 ? _freeIds.Pop() : _nextId++;
        if (id >= _byId.Length)
        {
            Array.Resize(ref _byId, _byId.Length * 2);
        }

        var entry = new SubjectEntry(key, id);
        _byId[id] = entry;
        _byKey.Add(key, entry);
        return entry;
    }

    /// <summary>Removes a subject that has no messages left; its id may be handed out again.</summary>
    public void Remove(SubjectEntry entry)
    {
        _byKey.Remove(entry.Key);
        _byId[entry.Id] = null;
        _freeIds.Push(entry.Id);
    }

    /// <summary>Forgets every subject.</summary>
    public void Clear()
    {
        _byKey.Clear();
        _freeIds.Clear();
        Array.Clear(_byId);
        _nextId = 1;
    }

    /// <summary>Every live entry (no particular order).</summary>
    public Dictionary<byte[], SubjectEntry>.ValueCollection Entries => _byKey.Values;
}
