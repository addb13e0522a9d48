namespace Courier.Protocols.Mqtt;

/// <summary>
/// The Topic Aliases a server sets on one MQTT 5.0 connection, topic name to alias (1..<see cref="Maximum"/>,
/// never above the client's Topic Alias Maximum [MQTT-3.3.2-10]). The first PUBLISH of a topic carries the
/// topic and a new alias; later ones carry an empty topic and the alias [MQTT-3.3.2-12]. Once every alias is
/// taken, a new topic takes the least recently assigned one (set again with the new topic, as the spec allows a
/// sender to remap an alias [MQTT-3.3.2.3.4]). Aliases belong to the network connection: none survive it.
/// </summary>
/// <remarks>
/// A lookup hashes the topic bytes and scans at most <see cref="Maximum"/> entries (a small number, see the
/// constructor): no string, no allocation. Each alias keeps its topic in its own buffer, grown only when a
/// longer topic takes it, so steady state allocates nothing. Not thread-safe: the caller holds the lock
/// that orders its frames on the wire.
/// </remarks>
public sealed class MqttOutgoingTopicAliases
{
    private readonly byte[]?[] _topics;
    private readonly int[] _lengths;
    private readonly int[] _hashes;
    private int _assigned; // aliases 1.._assigned are in use
    private int _oldest; // once all are in use: index of the least recently assigned one

    /// <param name="maximum">The highest alias to use (1..65535): the client's Topic Alias Maximum or less.</param>
    public MqttOutgoingTopicAliases(ushort maximum)
    {
        ArgumentOutOfRangeException.ThrowIfZero(maximum);
        Maximum = maximum;
        _topics = new byte[]?[maximum];
        _lengths = new int[maximum];
        _hashes = new int[maximum];
    }

    /// <summary>The highest alias this table uses.</summary>
    public ushort Maximum { get; }

    /// <summary>The alias <paramref name="topic"/> has on this connection; 0 when it has none.</summary>
    public ushort Find(ReadOnlySpan<byte> topic)
    {
        var hash = Hash(topic);
        for (var i = 0; i < _assigned; i++)
        {
            if (_hashes[i] == hash && _lengths[i] == topic.Length && topic.SequenceEqual(_topics[i].AsSpan(0, topic.Length)))
            {
                return (ushort)(i + 1);
            }
        }

        return 0;
    }

    /// <summary>The alias <see cref="Assign"/> gives next: a free one, else the least recently assigned.</summary>
    public ushort Next => (ushort)((_assigned < Maximum ? _assigned : _oldest) + 1);

    /// <summary>Gives <paramref name="topic"/> (not empty, with no alias) the alias <see cref="Next"/> names, and returns it.</summary>
    public ushort Assign(ReadOnlySpan<byte> topic)
    {
        int index;
        if (_assigned < Maximum)
        {
            index = _assigned++;
        }
        else
        {
            index = _oldest;
            _oldest = (_oldest + 1) % Maximum;
        }

        var buffer = _topics[index];
        if (buffer is null || buffer.Length < topic.Length)
        {
            buffer = _topics[index] = new byte[Math.Max(topic.Length, 32)];
        }

        topic.CopyTo(buffer);
        _lengths[index] = topic.Length;
        _hashes[index] = Hash(topic);
        return (ushort)(index + 1);
    }

    private static int Hash(ReadOnlySpan<byte> topic)
    {
        var hash = default(HashCode);
        hash.AddBytes(topic);
        return hash.ToHashCode();
    }
}
