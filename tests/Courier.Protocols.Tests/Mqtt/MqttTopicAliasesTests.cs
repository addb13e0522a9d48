using Courier.Protocols.Mqtt;
using Xunit;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>The Topic Alias table of one connection: range, set, replace, unknown. [MQTT-3.3.2.3.4]</summary>
public sealed class MqttTopicAliasesTests
{
    [Fact]
    public void Aliases_are_in_range_from_1_to_the_maximum()
    {
        var aliases = new MqttTopicAliases(10);
        Assert.False(aliases.InRange(0));
        Assert.True(aliases.InRange(1));
        Assert.True(aliases.InRange(10));
        Assert.False(aliases.InRange(11));
    }

    [Fact]
    public void An_alias_names_the_topic_last_set_for_it_longer_or_shorter()
    {
        var aliases = new MqttTopicAliases(3);
        Assert.False(aliases.TryGet(2, out _));
        aliases.Set(2, "a/b"u8);
        aliases.Set(3, "other"u8);
        Assert.True(aliases.TryGet(2, out var topic));
        Assert.Equal("a/b", System.Text.Encoding.UTF8.GetString(topic));

        var longer = new string('x', 100);
        aliases.Set(2, System.Text.Encoding.UTF8.GetBytes(longer));
        Assert.True(aliases.TryGet(2, out topic));
        Assert.Equal(longer, System.Text.Encoding.UTF8.GetString(topic));
        aliases.Set(2, "c"u8);
        Assert.True(aliases.TryGet(2, out topic));
        Assert.Equal("c", System.Text.Encoding.UTF8.GetString(topic));
        Assert.True(aliases.TryGet(3, out topic));
        Assert.Equal("other", System.Text.Encoding.UTF8.GetString(topic));
        Assert.False(aliases.TryGet(1, out _));
    }
}
