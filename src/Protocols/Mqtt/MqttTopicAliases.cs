namespace Courier.Protocols.Mqtt;

/// <summary>
/// The Topic Aliases one MQTT 5.0 sender set on one connection: alias (1..<see cref="Maximum"/>) to
/// topic name. A PUBLISH with a topic and an alias sets (or replaces) the alias; one with an empty
/// topic and an alias uses it. Aliases belong to the connection: none survive it. [MQTT-3.3.2-10],
/// [MQTT-3.3.2-11], [MQTT-3.3.2-12]
/// </summary>
/// <remarks>
/// Each alias keeps its topic in its own buffer, grown only when a longer topic is set, so setting an
/// alias again with a topic no longer than before, and every use of it, allocate nothing. Used by the
/// connection's read pump only: not thread-safe.
/// </remarks>
public sealed class MqttTopicAliases
{
    private readonly byte[]?[] _topics;
    private readonly int[] _lengths;

    /// <param name="maximum">The Topic Alias Maximum this side announced (1..65535).</param>
    public MqttTopicAliases(ushort maximum)
    {
        ArgumentOutOfRangeException.ThrowIfZero(maximum);
        Maximum = maximum;
        _topics = new byte[]?[maximum + 1];
        _lengths = new int[maximum + 1];
    }

    /// <summary>The highest alias accepted.</summary>
    public ushort Maximum { get; }

    /// <summary>Whether <paramref name="alias"/> is in 1..<see cref="Maximum"/>; outside it is DISCONNECT 0x94. [MQTT-3.3.2-9]</summary>
    public bool InRange(int alias) => alias >= 1 && alias <= Maximum;

    /// <summary>Sets <paramref name="alias"/> (in range) to <paramref name="topic"/> (not empty), replacing what it named.</summary>
    public void Set(int alias, ReadOnlySpan<byte> topic)
    {
        var buffer = _topics[alias];
        if (buffer is null || buffer.Length < topic.Length)
        {
            buffer = _topics[alias] = new byte[Math.Max(topic.Length, 32)];
        }

        topic.CopyTo(buffer);
        _lengths[alias] = topic.Length;
    }

    /// <summary>The topic <paramref name="alias"/> (in range) names; false when no PUBLISH on this connection set it.</summary>
    public bool TryGet(int alias, out ReadOnlySpan<byte> topic)
    {
        var buffer = _topics[alias];
        topic = buffer is null ? default : buffer.AsSpan(0, _lengths[alias]);
        return buffer is not null;
    }
}
