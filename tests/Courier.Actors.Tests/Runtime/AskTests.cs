using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class AskTests : TestKitBase
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(3);

    [Fact]
    public async Task Ask_returns_the_reply()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var reply = await echo.Ask<string>("hi", Timeout);
        Assert.Equal("hi", reply);
    }

    [Fact]
    public async Task Ask_without_a_reply_times_out_with_AskTimeoutException()
    {
        var silent = Sys.ActorOf(Props.Create(() => new SilentActor()));
        var e = await Assert.ThrowsAsync<AskTimeoutException>(() => silent.Ask<string>("hi", TimeSpan.FromMilliseconds(50)));
        Assert.Contains("Timeout", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Status_Failure_reply_faults_the_ask_with_its_cause()
    {
        var actor = Sys.ActorOf(Props.Create(() => new StatusActor()));
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => actor.Ask<int>("fail", Timeout));
        Assert.Equal("no", e.Message);
    }

    [Fact]
    public async Task Status_Success_reply_completes_the_ask_with_its_value()
    {
        var actor = Sys.ActorOf(Props.Create(() => new StatusActor()));
        Assert.Equal(7, await actor.Ask<int>("ok", Timeout));
        var status = await actor.Ask<Status.Success>("ok", Timeout);
        Assert.Equal(7, status.Status);
    }

    [Fact]
    public async Task Reply_of_another_type_faults_the_ask_with_InvalidCastException()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        await Assert.ThrowsAsync<InvalidCastException>(() => echo.Ask<int>("not an int", Timeout));
    }

    [Fact]
    public async Task Ask_to_a_stopped_actor_fails_at_once()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(echo);
        Sys.Stop(echo);
        ExpectTerminated(echo);
        await Assert.ThrowsAsync<AskTimeoutException>(() => echo.Ask<string>("hi", TimeSpan.FromMinutes(1)));
    }

    [Fact]
    public async Task Second_reply_to_an_ask_goes_to_dead_letters()
    {
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters.Ref, typeof(DeadLetter));
        var actor = Sys.ActorOf(Props.Create(() => new TwiceActor()));
        Assert.Equal("first", await actor.Ask<string>("go", Timeout));
        Assert.Equal("second", deadLetters.ExpectMsg<DeadLetter>().Message);
    }

    [Fact]
    public async Task Ask_can_be_cancelled()
    {
        var silent = Sys.ActorOf(Props.Create(() => new SilentActor()));
        using var cts = new CancellationTokenSource();
        var task = silent.Ask<string>("hi", TimeSpan.FromMinutes(1), cts.Token);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => task);
    }

    [Fact]
    public async Task Ask_continuation_does_not_run_on_the_replying_actor()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var replied = await echo.Ask<string>("x", Timeout);
        Assert.Equal("x", replied);
        Assert.Null(Courier.Actors.Runtime.Internal.ActorCell.Current);
    }

    [Fact]
    public void Ask_rejects_a_non_positive_timeout()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = echo.Ask<string>("x", TimeSpan.Zero); });
    }

    [Fact]
    public async Task Many_concurrent_asks_each_get_their_own_reply()
    {
        var echo = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var asks = Enumerable.Range(0, 1_000).Select(i => echo.Ask<int>(i, TimeSpan.FromSeconds(10))).ToArray();
        var replies = await Task.WhenAll(asks);
        Assert.Equal(Enumerable.Range(0, 1_000), replies);
    }

    private sealed class SilentActor : ReceiveActor
    {
        public SilentActor() => ReceiveAny(_ => { });
    }

    private sealed class StatusActor : ReceiveActor
    {
        public StatusActor()
        {
            Receive<string>(s => s == "fail", _ => Sender.Tell(new Status.Failure(new InvalidOperationException("no")), Self));
            Receive<string>(s => s == "ok", _ => Sender.Tell(new Status.Success(7), Self));
        }
    }

    private sealed class TwiceActor : ReceiveActor
    {
        public TwiceActor() => Receive<string>(_ =>
        {
            Sender.Tell("first", Self);
            Sender.Tell("second", Self);
        });
    }
}
