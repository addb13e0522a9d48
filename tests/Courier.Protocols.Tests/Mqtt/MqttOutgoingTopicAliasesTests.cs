using Courier.Protocols.Mqtt;
using Xunit;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// The Topic Aliases a server sets on one connection: aliases 1..maximum in order, found again by topic,
/// the least recently assigned one taken by a new topic once all are used, lookups that allocate nothing.
/// [MQTT-3.3.2-10], [MQTT-3.3.2.3.4]
/// </summary>
public sealed class MqttOutgoingTopicAliasesTests
{
    [Fact]
    public void Topics_get_aliases_1_to_the_maximum_and_are_found_again()
    {
        var aliases = new MqttOutgoingTopicAliases(3);
        Assert.Equal(0, aliases.Find("a"u8));
        Assert.Equal(1, aliases.Next);
        Assert.Equal(1, aliases.Assign("a"u8));
        Assert.Equal(2, aliases.Assign("b/c"u8));
        Assert.Equal(1, aliases.Find("a"u8));
        Assert.Equal(2, aliases.Find("b/c"u8));
        Assert.Equal(0, aliases.Find("b/"u8)); // a prefix is another topic
        Assert.Equal(0, aliases.Find("b/cd"u8));
        Assert.Equal(3, aliases.Next);
    }

    [Fact]
    public void Once_every_alias_is_taken_a_new_topic_takes_the_least_recently_assigned()
    {
        var aliases = new MqttOutgoingTopicAliases(2);
        aliases.Assign("one"u8);
        aliases.Assign("two"u8);
        Assert.Equal(1, aliases.Find("one"u8)); // a use does not make an alias recent: assignment order counts

        Assert.Equal(1, aliases.Next);
        Assert.Equal(1, aliases.Assign("three"u8));
        Assert.Equal(0, aliases.Find("one"u8));
        Assert.Equal(1, aliases.Find("three"u8));
        Assert.Equal(2, aliases.Find("two"u8));

        Assert.Equal(2, aliases.Assign(System.Text.Encoding.UTF8.GetBytes(new string('x', 200)))); // longer than the buffer it takes
        Assert.Equal(0, aliases.Find("two"u8));
        Assert.Equal(2, aliases.Find(System.Text.Encoding.UTF8.GetBytes(new string('x', 200))));
        Assert.Equal(1, aliases.Assign("two"u8));
        Assert.Equal(1, aliases.Find("two"u8));
    }

    [Fact]
    public void Finding_and_reassigning_within_the_buffers_allocate_nothing()
    {
        var aliases = new MqttOutgoingTopicAliases(64);
        ReadOnlySpan<byte> first = "sensors/room/1/temperature"u8;
        ReadOnlySpan<byte> second = "sensors/room/2/temperature"u8;
        for (var i = 0; i < 64; i++)
        {
            aliases.Assign(i % 2 == 0 ? first : second); // every buffer made
        }

        var before = GC.GetAllocatedBytesForCurrentThread();
        var found = 0;
        for (var i = 0; i < 1000; i++)
        {
            found += aliases.Find(first) + aliases.Find("sensors/room/3/temperature"u8);
            aliases.Assign(second);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.True(found > 0);
    }
}
