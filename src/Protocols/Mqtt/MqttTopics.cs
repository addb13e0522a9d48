namespace Courier.Protocols.Mqtt;

/// <summary>Why an MQTT topic name or filter has no NATS subject.</summary>
public enum MqttTopicError : byte
{
    None,

    /// <summary>'.' or ' ' in the topic: nats-server 2.9 "characters ' ' and '.' not supported for MQTT topics".</summary>
    UnsupportedCharacter,

    /// <summary>'+' or '#' in a topic name (PUBLISH): "wildcards not allowed in publish's topic". [MQTT-3.3.2-2]</summary>
    WildcardInTopicName,

    /// <summary>The destination span is shorter than <see cref="MqttTopics.MaxSubjectLength"/> of the input.</summary>
    DestinationTooSmall,
}

/// <summary>
/// MQTT topic names and filters to NATS subjects and back, exactly as nats-server 2.9
/// (mqttToNATSSubjectConversion, natsSubjectToMQTTTopic): '/' is '.', '+' is '*', '#' is '&gt;';
/// a '/' that starts the topic becomes "/.", a '/' that ends it or is followed by another '/'
/// becomes "./" (so empty levels survive the round trip: "foo//bar" is "foo./.bar", "/foo" is
/// "/.foo", "foo/" is "foo./"); '.' and ' ' are not supported in MQTT topics.
/// </summary>
/// <remarks>Writes into a caller's span; allocates nothing.</remarks>
public static class MqttTopics
{
    private const byte LevelSeparator = (byte)'/';
    private const byte SingleLevelWildcard = (byte)'+';
    private const byte MultiLevelWildcard = (byte)'#';
    private const byte SubjectSeparator = (byte)'.';

    private static ReadOnlySpan<byte> SharedPrefix => "$share/"u8;

    /// <summary>MQTT 5.0: whether <paramref name="filter"/> names a shared subscription (starts with <c>$share/</c>). [MQTT-4.8.2]</summary>
    public static bool IsSharedFilter(ReadOnlySpan<byte> filter) => filter.StartsWith(SharedPrefix);

    /// <summary>
    /// Splits a shared subscription's filter <c>$share/{ShareName}/{filter}</c>: false when the share
    /// name is empty or holds '+' or '#', or no filter follows it [MQTT-4.8.2-1], [MQTT-4.8.2-2].
    /// </summary>
    public static bool TrySplitSharedFilter(ReadOnlySpan<byte> filter, out ReadOnlySpan<byte> shareName, out ReadOnlySpan<byte> topicFilter)
    {
        shareName = default;
        topicFilter = default;
        var rest = filter[SharedPrefix.Length..];
        var slash = rest.IndexOf(LevelSeparator);
        if (slash <= 0 || slash == rest.Length - 1 || rest[..slash].IndexOfAny(SingleLevelWildcard, MultiLevelWildcard) >= 0)
        {
            return false;
        }

        shareName = rest[..slash];
        topicFilter = rest[(slash + 1)..];
        return true;
    }

    /// <summary>The longest subject a topic of <paramref name="topicLength"/> bytes maps to: every '/' may take two bytes, plus a final '/'.</summary>
    public static int MaxSubjectLength(int topicLength) => (2 * topicLength) + 1;

    /// <summary>Maps a PUBLISH topic name (no wildcards) to the subject it publishes on.</summary>
    public static MqttTopicError TryTopicToSubject(ReadOnlySpan<byte> topic, Span<byte> destination, out int written) =>
        Convert(topic, wildcardsAllowed: false, destination, out written);

    /// <summary>
    /// Maps a SUBSCRIBE topic filter to the subject it subscribes to. The result is not checked as a
    /// NATS subject ("foo+" gives "foo*"); nats-server then fails that subscription (SUBACK 0x80).
    /// </summary>
    public static MqttTopicError TryFilterToSubject(ReadOnlySpan<byte> filter, Span<byte> destination, out int written) =>
        Convert(filter, wildcardsAllowed: true, destination, out written);

    /// <summary>
    /// Maps a NATS subject (no wildcards) to the MQTT topic it is delivered as; the inverse of
    /// <see cref="TryTopicToSubject"/>. The topic is never longer than the subject.
    /// </summary>
    public static int SubjectToTopic(ReadOnlySpan<byte> subject, Span<byte> destination)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(destination.Length, subject.Length);
        var end = subject.Length - 1;
        var j = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            switch (subject[i])
            {
                case LevelSeparator:
                    // "/." at the start stands for a leading '/': keep the '/', the '.' is dropped below.
                    if (!(i == 0 && i < end && subject[i + 1] == SubjectSeparator))
                    {
                        destination[j++] = LevelSeparator;
                    }

                    break;
                case SubjectSeparator:
                    destination[j++] = LevelSeparator;
                    if (i < end && subject[i + 1] == LevelSeparator)
                    {
                        i++; // "./" is one '/' (an empty level follows)
                    }

                    break;
                default:
                    destination[j++] = subject[i];
                    break;
            }
        }

        return j;
    }

    /// <summary>
    /// True when the subject of a filter ending in "/#" has more than one token and ends with ".&gt;":
    /// '#' also matches its parent level, so nats-server subscribes to the parent subject
    /// (<see cref="ParentLevel"/>) as well ("foo/#" subscribes to "foo.&gt;" and "foo"). [MQTT-4.7.1-2]
    /// </summary>
    public static bool NeedsParentLevelSubscription(ReadOnlySpan<byte> subject) =>
        subject.Length >= 3 && subject[^2] == SubjectSeparator && subject[^1] == (byte)'>';

    /// <summary>The subject without its trailing ".&gt;" (call only when <see cref="NeedsParentLevelSubscription"/>).</summary>
    public static ReadOnlySpan<byte> ParentLevel(ReadOnlySpan<byte> subject) => subject[..^2];

    private static MqttTopicError Convert(ReadOnlySpan<byte> topic, bool wildcardsAllowed, Span<byte> destination, out int written)
    {
        written = 0;
        if (destination.Length < MaxSubjectLength(topic.Length))
        {
            return MqttTopicError.DestinationTooSmall;
        }

        var end = topic.Length - 1;
        var j = 0;
        for (var i = 0; i < topic.Length; i++)
        {
            var c = topic[i];
            switch (c)
            {
                case LevelSeparator:
                    if (i == 0 || destination[j - 1] == SubjectSeparator)
                    {
                        // An empty level at the start, or right after a '/' written as '.': "/.".
                        destination[j++] = LevelSeparator;
                        destination[j++] = SubjectSeparator;
                    }
                    else if (i == end || topic[i + 1] == LevelSeparator)
                    {
                        // An empty level follows: "./".
                        destination[j++] = SubjectSeparator;
                        destination[j++] = LevelSeparator;
                    }
                    else
                    {
                        destination[j++] = SubjectSeparator;
                    }

                    break;
                case SubjectSeparator:
                case (byte)' ':
                    return MqttTopicError.UnsupportedCharacter;
                case SingleLevelWildcard:
                case MultiLevelWildcard:
                    if (!wildcardsAllowed)
                    {
                        return MqttTopicError.WildcardInTopicName;
                    }

                    destination[j++] = c == SingleLevelWildcard ? (byte)'*' : (byte)'>';
                    break;
                default:
                    destination[j++] = c;
                    break;
            }
        }

        if (j > 0 && destination[j - 1] == SubjectSeparator)
        {
            destination[j++] = LevelSeparator; // a trailing empty level
        }

        written = j;
        return MqttTopicError.None;
    }
}
