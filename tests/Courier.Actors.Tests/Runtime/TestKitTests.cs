using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class TestKitTests : TestKitBase
{
    private static readonly TimeSpan Brief = TimeSpan.FromMilliseconds(50);

    [Fact]
    public void ExpectMsg_times_out_with_a_TestKitAssertionException()
    {
        var probe = CreateTestProbe();
        var e = Assert.Throws<TestKitAssertionException>(() => probe.ExpectMsg<string>(Brief));
        Assert.Contains("String", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ExpectMsg_of_the_wrong_type_or_value_fails()
    {
        var probe = CreateTestProbe();
        probe.Tell(1);
        Assert.Throws<TestKitAssertionException>(() => probe.ExpectMsg<string>());
        probe.Tell("a");
        Assert.Throws<TestKitAssertionException>(() => probe.ExpectMsg("b"));
        probe.Tell("c");
        Assert.Throws<TestKitAssertionException>(() => probe.ExpectMsg<string>(s => s == "d"));
    }

    [Fact]
    public void ExpectNoMsg_fails_when_a_message_arrives()
    {
        var probe = CreateTestProbe();
        probe.Tell("surprise");
        Assert.Throws<TestKitAssertionException>(() => probe.ExpectNoMsg(TimeSpan.FromSeconds(1)));
        probe.ExpectNoMsg(Brief);
    }

    [Fact]
    public void Send_Reply_and_LastSender_talk_between_probes()
    {
        var alice = CreateTestProbe("alice");
        var bob = CreateTestProbe("bob");
        alice.Send(bob.Ref, "hi bob");
        bob.ExpectMsg("hi bob");
        Assert.Same(alice.Ref, bob.LastSender);
        bob.Reply("hi alice");
        alice.ExpectMsg("hi alice");
        Assert.Same(bob.Ref, alice.LastSender);
        Assert.Equal("akka://test/user/alice", alice.Ref.Path);
    }

    [Fact]
    public void FishForMessage_skips_until_the_predicate_matches()
    {
        var probe = CreateTestProbe();
        foreach (var i in new[] { 1, 2, 3, 4 })
        {
            probe.Tell(i);
        }

        Assert.Equal(3, probe.FishForMessage<int>(i => i == 3));
        probe.ExpectMsg(4);
        Assert.Throws<TestKitAssertionException>(() => probe.FishForMessage(_ => false, Brief));
    }

    [Fact]
    public void ReceiveN_returns_messages_in_order()
    {
        var probe = CreateTestProbe();
        probe.Tell("a");
        probe.Tell("b");
        Assert.Equal(new object[] { "a", "b" }, probe.ReceiveN(2));
        Assert.False(probe.HasMessages);
    }

    [Fact]
    public void ExpectTerminated_fails_for_another_actor()
    {
        var first = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var second = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(first);
        Sys.Stop(first);
        Assert.Throws<TestKitAssertionException>(() => ExpectTerminated(second));
    }

    [Fact]
    public void AwaitAssert_retries_until_the_assertion_holds()
    {
        var calls = 0;
        AwaitAssert(() => Assert.True(++calls >= 3));
        Assert.Equal(3, calls);
        var e = Assert.Throws<TestKitAssertionException>(() => AwaitAssert(() => Assert.Fail("never"), Brief));
        Assert.NotNull(e.InnerException);
    }

    [Fact]
    public void AwaitCondition_waits_for_the_condition_or_fails()
    {
        var calls = 0;
        AwaitCondition(() => ++calls >= 3);
        Assert.Throws<TestKitAssertionException>(() => AwaitCondition(() => false, Brief));
    }

    [Fact]
    public void Disposing_the_test_kit_terminates_the_system()
    {
        var kit = new StandaloneKit();
        var system = kit.Sys;
        kit.Dispose();
        Assert.True(system.WhenTerminated.IsCompleted);
    }

    private sealed class StandaloneKit : TestKitBase
    {
        public StandaloneKit()
            : base("standalone")
        {
        }
    }
}
