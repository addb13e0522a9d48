using System.Buffers.Binary;

namespace Courier.Protocols.Mqtt;

/// <summary>One topic filter of a SUBSCRIBE or UNSUBSCRIBE, a slice of the packet.</summary>
public readonly ref struct MqttTopicFilter
{
    /// <summary>Creates a filter entry.</summary>
    public MqttTopicFilter(ReadOnlySpan<byte> filter, byte options)
    {
        Filter = filter;
        Options = options;
    }

    /// <summary>The topic filter (UTF-8).</summary>
    public ReadOnlySpan<byte> Filter { get; }

    /// <summary>SUBSCRIBE: the requested QoS; UNSUBSCRIBE: 0.</summary>
    public byte QoS => (byte)(Options & 0x03);

    /// <summary>SUBSCRIBE: the whole options byte (3.1.1: the requested QoS; 5.0: QoS, No Local, Retain As Published, Retain Handling). [MQTT-3.8.3.1]</summary>
    public byte Options { get; }

    /// <summary>MQTT 5.0 SUBSCRIBE: No Local (bit 2): not sent its own publishes. [MQTT-3.8.3-3]</summary>
    public bool NoLocal => (Options & 0x04) != 0;

    /// <summary>MQTT 5.0 SUBSCRIBE: Retain As Published (bit 3).</summary>
    public bool RetainAsPublished => (Options & 0x08) != 0;

    /// <summary>MQTT 5.0 SUBSCRIBE: Retain Handling (bits 4-5): 0 send retained, 1 only for a new subscription, 2 never.</summary>
    public byte RetainHandling => (byte)((Options >> 4) & 0x03);
}

/// <summary>
/// The topic filters of a SUBSCRIBE or UNSUBSCRIBE, enumerated in place without allocating. The
/// parser validated the list, so enumeration never fails.
/// </summary>
/// <remarks>
/// SUBSCRIBE payload: (u16 length, filter, requested QoS byte)+. UNSUBSCRIBE payload: (u16 length, filter)+.
/// </remarks>
public readonly ref struct MqttTopicFilters
{
    private readonly ReadOnlySpan<byte> _list;
    private readonly bool _withQoS;

    /// <summary>Wraps a validated filter list.</summary>
    public MqttTopicFilters(ReadOnlySpan<byte> list, bool withQoS)
    {
        _list = list;
        _withQoS = withQoS;
    }

    /// <summary>Counts the filters.</summary>
    public int Count
    {
        get
        {
            var count = 0;
            foreach (var filter in this)
            {
                _ = filter;
                count++;
            }

            return count;
        }
    }

    /// <summary>Starts an enumeration.</summary>
    public Enumerator GetEnumerator() => new(_list, _withQoS);

    /// <summary>Walks the list one entry at a time.</summary>
    public ref struct Enumerator
    {
        private readonly bool _withQoS;
        private ReadOnlySpan<byte> _rest;
        private MqttTopicFilter _current;

        internal Enumerator(ReadOnlySpan<byte> list, bool withQoS)
        {
            _rest = list;
            _withQoS = withQoS;
            _current = default;
        }

        /// <summary>The current filter.</summary>
        public readonly MqttTopicFilter Current => _current;

        /// <summary>Moves to the next filter.</summary>
        public bool MoveNext()
        {
            if (_rest.Length < 2)
            {
                return false;
            }

            var length = BinaryPrimitives.ReadUInt16BigEndian(_rest);
            var filter = _rest.Slice(2, length);
            var qos = _withQoS ? _rest[2 + length] : (byte)0;
            _rest = _rest[(2 + length + (_withQoS ? 1 : 0))..];
            _current = new MqttTopicFilter(filter, qos);
            return true;
        }
    }
}
