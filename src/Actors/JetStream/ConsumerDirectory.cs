using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Text;
using Akka.Actor;

namespace Courier.Actors.JetStream;

/// <summary>
/// An account's consumer actors by stream and consumer name, readable from any thread. The API
/// client's request sink hands a pull request (<c>CONSUMER.MSG.NEXT</c>) straight to its consumer with
/// it, and a stream's ack subscription hands acks straight to theirs, instead of through the API
/// actor's and the stream actor's mailboxes: two hand-overs less per pull request, one less per ack
/// batch, and for a file stream none to the I/O dispatcher's threads (whose idle spinning cost the
/// jsord row a sixth of the server's CPU). nats-server likewise has each consumer subscribe its own
/// MSG.NEXT subject.
/// </summary>
/// <remarks>
/// Written only by the API actor (a stream's entry, on start and delete) and by each stream actor (its
/// own consumers). A request whose consumer is not (yet) listed takes the actors' path as before, so a
/// MSG.NEXT sent before its consumer's create was answered still reaches it in order.
/// </remarks>
internal sealed class ConsumerDirectory
{
    // bytes: nats-server's JSMaxNameLen is 255 for a stream or consumer name; anything longer is not listed.
    private const int MaxKeyBytes = 512;

    private readonly ConcurrentDictionary<string, StreamConsumers> _streams = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, StreamConsumers>.AlternateLookup<ReadOnlySpan<char>> _streamsBySpan;

    public ConsumerDirectory() => _streamsBySpan = _streams.GetAlternateLookup<ReadOnlySpan<char>>();

    /// <summary>A fresh, empty list of <paramref name="stream"/>'s consumers, replacing any earlier one.</summary>
    public StreamConsumers Open(string stream)
    {
        var consumers = new StreamConsumers();
        _streams[stream] = consumers;
        return consumers;
    }

    /// <summary>The stream is gone (deleted, or about to be started again with a new list).</summary>
    public void Close(string stream) => _streams.TryRemove(stream, out _);

    /// <summary>
    /// The consumer named by <c>&lt;stream&gt;.&lt;consumer&gt;</c> (UTF-8, as a MSG.NEXT subject ends), when
    /// it is running on this node.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> streamDotConsumer, [NotNullWhen(true)] out IActorRef? consumer)
    {
        consumer = null;
        if (streamDotConsumer.Length > MaxKeyBytes)
        {
            return false;
        }

        Span<char> chars = stackalloc char[MaxKeyBytes];
        int length;
        try
        {
            length = Encoding.UTF8.GetChars(streamDotConsumer, chars);
        }
        catch (DecoderFallbackException)
        {
            return false;
        }

        var key = chars[..length];
        var dot = key.IndexOf('.');
        return dot > 0
            && _streamsBySpan.TryGetValue(key[..dot], out var consumers)
            && consumers.TryGet(key[(dot + 1)..], out consumer);
    }
}

/// <summary>
/// One stream's consumer actors by name: the stream actor's own list (it alone writes it), readable
/// from publishers' threads through the account's <see cref="ConsumerDirectory"/>.
/// </summary>
internal sealed class StreamConsumers
{
    private readonly ConcurrentDictionary<string, IActorRef> _byName = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, IActorRef>.AlternateLookup<ReadOnlySpan<char>> _bySpan;

    public StreamConsumers() => _bySpan = _byName.GetAlternateLookup<ReadOnlySpan<char>>();

    public int Count => _byName.Count;

    public ICollection<string> Names => _byName.Keys;

    public ICollection<IActorRef> Actors => _byName.Values;

    public IActorRef this[string name]
    {
        set => _byName[name] = value;
    }

    public bool TryGetValue(string name, [NotNullWhen(true)] out IActorRef? consumer) => _byName.TryGetValue(name, out consumer);

    public bool TryGet(ReadOnlySpan<char> name, [NotNullWhen(true)] out IActorRef? consumer) => _bySpan.TryGetValue(name, out consumer);

    public bool ContainsKey(string name) => _byName.ContainsKey(name);

    public bool Remove(string name) => _byName.TryRemove(name, out _);

    public bool Remove(string name, [NotNullWhen(true)] out IActorRef? consumer) => _byName.TryRemove(name, out consumer);

    public void Clear() => _byName.Clear();

    /// <summary>A snapshot of the entries (the stream actor iterates while it may remove).</summary>
    public KeyValuePair<string, IActorRef>[] Entries() => [.. _byName];
}
