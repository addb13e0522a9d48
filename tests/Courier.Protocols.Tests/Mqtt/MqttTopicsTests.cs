using System.Text;
using Courier.Protocols.Mqtt;
using Xunit;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// Topic and filter mapping, the table of nats-server 2.9.10's TestMQTTTopicAndSubjectConversion and
/// TestMQTTFilterConversion (server/mqtt_test.go), each topic also mapped back.
/// </summary>
public sealed class MqttTopicsTests
{
    public static TheoryData<string, string> TopicTable => new()
    {
        { "/", "/./" },
        { "//", "/././" },
        { "///", "/./././" },
        { "////", "/././././" },
        { "foo", "foo" },
        { "/foo", "/.foo" },
        { "//foo", "/./.foo" },
        { "///foo", "/././.foo" },
        { "///foo/", "/././.foo./" },
        { "///foo//", "/././.foo././" },
        { "///foo///", "/././.foo./././" },
        { "foo/bar", "foo.bar" },
        { "/foo/bar", "/.foo.bar" },
        { "/foo/bar/", "/.foo.bar./" },
        { "foo/bar/baz", "foo.bar.baz" },
        { "/foo/bar/baz", "/.foo.bar.baz" },
        { "/foo/bar/baz/", "/.foo.bar.baz./" },
        { "bar/", "bar./" },
        { "bar//", "bar././" },
        { "bar///", "bar./././" },
        { "foo//bar", "foo./.bar" },
        { "foo///bar", "foo././.bar" },
        { "foo////bar", "foo./././.bar" },
        { "capteur/é/✓", "capteur.é.✓" },
    };

    public static TheoryData<string, string> FilterTable => new()
    {
        { "+", "*" },
        { "/+", "/.*" },
        { "+/", "*./" },
        { "/+/", "/.*./" },
        { "foo/+", "foo.*" },
        { "foo/+/", "foo.*./" },
        { "foo/+/bar", "foo.*.bar" },
        { "foo/+/+", "foo.*.*" },
        { "foo/+/+/", "foo.*.*./" },
        { "foo/+/+/bar", "foo.*.*.bar" },
        { "foo//+", "foo./.*" },
        { "foo//+/", "foo./.*./" },
        { "foo//+//", "foo./.*././" },
        { "foo//+//bar", "foo./.*./.bar" },
        { "foo///+///bar", "foo././.*././.bar" },
        { "#", ">" },
        { "/#", "/.>" },
        { "/foo/#", "/.foo.>" },
        { "foo/#", "foo.>" },
        { "foo//#", "foo./.>" },
        { "foo///#", "foo././.>" },
        { "foo/bar/#", "foo.bar.>" },
        { "foo/bar", "foo.bar" },
    };

    [Theory]
    [MemberData(nameof(TopicTable))]
    public void A_topic_name_maps_to_the_subject_nats_server_uses_and_back(string topic, string subject)
    {
        Assert.Equal(MqttTopicError.None, ToSubject(topic, filter: false, out var mapped));
        Assert.Equal(subject, mapped);
        Assert.Equal(topic, ToTopic(mapped));
    }

    [Theory]
    [MemberData(nameof(FilterTable))]
    public void A_topic_filter_maps_to_the_subject_nats_server_subscribes_to(string filter, string subject)
    {
        Assert.Equal(MqttTopicError.None, ToSubject(filter, filter: true, out var mapped));
        Assert.Equal(subject, mapped);
    }

    [Theory]
    [InlineData("foo/+")]
    [InlineData("foo/#")]
    [InlineData("+")]
    public void A_wildcard_in_a_topic_name_is_refused(string topic) =>
        Assert.Equal(MqttTopicError.WildcardInTopicName, ToSubject(topic, filter: false, out _));

    [Theory]
    [InlineData("foo bar", false)]
    [InlineData("foo.bar", false)]
    [InlineData("foo.bar/#", true)]
    [InlineData("a/ /b", true)]
    public void A_dot_or_space_in_a_topic_or_filter_is_unsupported_as_in_nats_server(string topic, bool filter) =>
        Assert.Equal(MqttTopicError.UnsupportedCharacter, ToSubject(topic, filter, out _));

    [Fact]
    public void A_destination_shorter_than_the_worst_case_is_refused_before_writing()
    {
        var destination = new byte[MqttTopics.MaxSubjectLength(3) - 1];
        Assert.Equal(MqttTopicError.DestinationTooSmall, MqttTopics.TryTopicToSubject("a/b"u8, destination, out var written));
        Assert.Equal(0, written);
        Assert.All(destination, b => Assert.Equal(0, b));
    }

    [Fact]
    public void The_worst_case_topic_fills_its_maximum_subject_length()
    {
        Assert.Equal(MqttTopicError.None, ToSubject("///", filter: false, out var subject));
        Assert.Equal(MqttTopics.MaxSubjectLength(3), subject.Length);
    }

    [Theory]
    [InlineData("foo.>", true, "foo")]
    [InlineData("foo.bar.>", true, "foo.bar")]
    [InlineData("/.>", true, "/")]
    [InlineData("foo./.>", true, "foo./")]
    [InlineData(">", false, "")]
    [InlineData("foo.*", false, "")]
    [InlineData("foo>", false, "")]
    public void A_multi_level_filter_also_subscribes_to_its_parent_level_as_nats_server(string subject, bool needed, string parent)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        Assert.Equal(needed, MqttTopics.NeedsParentLevelSubscription(bytes));
        if (needed)
        {
            Assert.Equal(parent, Encoding.UTF8.GetString(MqttTopics.ParentLevel(bytes)));
        }
    }

    [Theory]
    [InlineData("foo.bar", "foo/bar")]
    [InlineData("foo", "foo")]
    [InlineData("_INBOX.abc.def", "_INBOX/abc/def")]
    [InlineData("/.foo", "/foo")]
    [InlineData("foo./.bar", "foo//bar")]
    public void A_nats_subject_is_delivered_to_mqtt_as_this_topic(string subject, string topic) =>
        Assert.Equal(topic, ToTopic(subject));

    [Theory]
    [InlineData("$share/g/a/b", "g", "a/b")]
    [InlineData("$share/group-1/#", "group-1", "#")]
    [InlineData("$share/g//x", "g", "/x")]
    public void A_shared_filter_splits_into_share_name_and_filter(string shared, string name, string filter)
    {
        Assert.True(MqttTopics.IsSharedFilter(Encoding.UTF8.GetBytes(shared)));
        Assert.True(MqttTopics.TrySplitSharedFilter(Encoding.UTF8.GetBytes(shared), out var shareName, out var topicFilter));
        Assert.Equal((name, filter), (Encoding.UTF8.GetString(shareName), Encoding.UTF8.GetString(topicFilter)));
    }

    [Theory]
    [InlineData("$share//x")] // empty share name [MQTT-4.8.2-1]
    [InlineData("$share/g+/x")]
    [InlineData("$share/#/x")]
    [InlineData("$share/g")] // no filter [MQTT-4.8.2-2]
    [InlineData("$share/g/")]
    [InlineData("$share/")]
    public void A_malformed_shared_filter_does_not_split(string shared) =>
        Assert.False(MqttTopics.TrySplitSharedFilter(Encoding.UTF8.GetBytes(shared), out _, out _));

    [Fact]
    public void Only_a_filter_starting_with_share_slash_is_shared()
    {
        Assert.False(MqttTopics.IsSharedFilter("$sharex/g/a"u8));
        Assert.False(MqttTopics.IsSharedFilter("a/$share/g/a"u8));
        Assert.False(MqttTopics.IsSharedFilter("$share"u8));
    }

    private static MqttTopicError ToSubject(string topic, bool filter, out string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(topic);
        var destination = new byte[MqttTopics.MaxSubjectLength(bytes.Length)];
        var error = filter
            ? MqttTopics.TryFilterToSubject(bytes, destination, out var written)
            : MqttTopics.TryTopicToSubject(bytes, destination, out written);
        subject = Encoding.UTF8.GetString(destination, 0, written);
        return error;
    }

    private static string ToTopic(string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        var destination = new byte[bytes.Length];
        var written = MqttTopics.SubjectToTopic(bytes, destination);
        return Encoding.UTF8.GetString(destination, 0, written);
    }
}
