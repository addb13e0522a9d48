using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class MessagingTests : TestKitBase
{
    [Fact]
    public void Messages_from_one_sender_arrive_in_send_order()
    {
        var actor = Sys.ActorOf(Props.Create(() => new ForwardingActor(TestActor)));
        for (var i = 0; i < 1_000; i++)
        {
            actor.Tell(i, null);
        }

        for (var i = 0; i < 1_000; i++)
        {
            ExpectMsg(i);
        }
    }

    [Fact]
    public void Tell_inside_an_actor_passes_Self_as_the_sender()
    {
        var teller = Sys.ActorOf(Props.Create(() => new TellingActor(TestActor)), "teller");
        teller.Tell("go", null);
        ExpectMsg("hello");
        Assert.Same(teller, LastSender);
    }

    [Fact]
    public void Sender_is_dead_letters_when_the_message_had_none()
    {
        var probe = CreateTestProbe();
        var actor = Sys.ActorOf(Props.Create(() => new SenderReportingActor(probe.Ref)));
        actor.Tell("who", ActorRefs.NoSender);
        Assert.Same(Sys.DeadLetters, probe.ExpectMsg<IActorRef>());
    }

    [Fact]
    public void Forward_keeps_the_original_sender()
    {
        var target = CreateTestProbe();
        var forwarder = Sys.ActorOf(Props.Create(() => new ForwardingActor(target.Ref)));
        forwarder.Tell("x", TestActor);
        target.ExpectMsg("x");
        Assert.Same(TestActor, target.LastSender);
    }

    [Fact]
    public void Actor_ref_is_equal_only_to_itself_and_has_a_path()
    {
        var a = Sys.ActorOf(Props.Create(() => new EchoActor()), "a");
        var b = Sys.ActorOf(Props.Create(() => new EchoActor()), "b");
        Assert.Equal("akka://test/user/a", a.Path);
        Assert.NotEqual(a, b);
        Assert.Equal(a, a);
        a.Tell("ping", TestActor);
        ExpectMsg("ping");
        Assert.Same(a, LastSender);
    }

    [Fact]
    public void Telling_a_stopped_actor_publishes_a_dead_letter()
    {
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters.Ref, typeof(DeadLetter));
        var actor = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(actor);
        Sys.Stop(actor);
        ExpectTerminated(actor);

        actor.Tell("too late", TestActor);

        var letter = deadLetters.ExpectMsg<DeadLetter>();
        Assert.Equal("too late", letter.Message);
        Assert.Same(actor, letter.Recipient);
        Assert.Same(TestActor, letter.Sender);
    }

    [Fact]
    public void Messages_to_DeadLetters_are_published()
    {
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters.Ref, typeof(DeadLetter));
        Sys.DeadLetters.Tell("lost", null);
        var letter = deadLetters.ExpectMsg<DeadLetter>();
        Assert.Equal("lost", letter.Message);
        Assert.Same(Sys.DeadLetters, letter.Recipient);
    }

    [Fact]
    public void Unhandled_message_is_published_and_the_actor_goes_on()
    {
        var unhandled = CreateTestProbe();
        Sys.EventStream.Subscribe(unhandled.Ref, typeof(UnhandledMessage));
        var actor = Sys.ActorOf(Props.Create(() => new StringOnlyActor()));
        actor.Tell(42, TestActor);
        var message = unhandled.ExpectMsg<UnhandledMessage>();
        Assert.Equal(42, message.Message);
        Assert.Same(actor, message.Recipient);

        actor.Tell("still alive", TestActor);
        ExpectMsg("still alive");
    }

    [Fact]
    public void Nobody_drops_messages_and_NoSender_is_null()
    {
        ActorRefs.Nobody.Tell("nothing", null);
        Assert.Null(ActorRefs.NoSender);
        Assert.Contains("Nobody", ActorRefs.Nobody.Path, StringComparison.Ordinal);
    }

    [Fact]
    public void Telling_null_throws()
    {
        var actor = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Assert.Throws<ArgumentNullException>(() => actor.Tell(null!, null));
    }

    [Fact]
    public void Unsubscribed_listener_gets_no_more_events()
    {
        var listener = CreateTestProbe();
        Assert.True(Sys.EventStream.Subscribe(listener.Ref, typeof(string)));
        Assert.False(Sys.EventStream.Subscribe(listener.Ref, typeof(string)));
        Sys.EventStream.Publish("one");
        listener.ExpectMsg("one");
        Assert.True(Sys.EventStream.Unsubscribe(listener.Ref));
        Sys.EventStream.Publish("two");
        listener.ExpectNoMsg(TimeSpan.FromMilliseconds(100));
    }

    private sealed class TellingActor : ReceiveActor
    {
        public TellingActor(IActorRef target) => Receive<string>(_ => target.Tell("hello"));
    }

    private sealed class SenderReportingActor : ReceiveActor
    {
        public SenderReportingActor(IActorRef probe) => ReceiveAny(_ => probe.Tell(Sender, null));
    }

    private sealed class StringOnlyActor : ReceiveActor
    {
        public StringOnlyActor() => Receive<string>(s => Sender.Tell(s, Self));
    }
}
