using Courier.Actors.Runtime;

namespace Courier.Actors.Tests.Runtime;

/// <summary>Forwards every message to a target, keeping the original sender.</summary>
internal sealed class ForwardingActor : ReceiveActor
{
    public ForwardingActor(IActorRef target) => ReceiveAny(m => target.Tell(m, Sender));
}

/// <summary>Replies to every message with the same message.</summary>
internal sealed class EchoActor : ReceiveActor
{
    public EchoActor() => ReceiveAny(m => Sender.Tell(m, Self));
}

/// <summary>
/// Reports its lifecycle to a probe as strings "name:event" and throws on <c>"boom"</c>.
/// Every other message is reported as "name:got:message#instance".
/// </summary>
internal sealed class LifecycleActor : ActorBase
{
    private static int _instances;
    private readonly IActorRef _probe;
    private readonly string _name;
    private readonly int _instance;

    public LifecycleActor(IActorRef probe, string name)
    {
        _probe = probe;
        _name = name;
        _instance = Interlocked.Increment(ref _instances);
        _probe.Tell($"{_name}:ctor", Self);
    }

    protected override bool Receive(object message)
    {
        switch (message)
        {
            case "boom":
                throw new InvalidOperationException("boom");
            case Props props:
                Context.ActorOf(props, "child");
                _probe.Tell($"{_name}:child-created", Self);
                return true;
            default:
                _probe.Tell($"{_name}:got:{message}", Self);
                return true;
        }
    }

    protected override void PreStart() => _probe.Tell($"{_name}:PreStart", Self);

    protected override void PostStop() => _probe.Tell($"{_name}:PostStop", Self);

    protected override void PreRestart(Exception reason, object? message)
    {
        _probe.Tell($"{_name}:PreRestart:{reason.Message}:{message}", Self);
        base.PreRestart(reason, message);
    }

    protected override void PostRestart(Exception reason)
    {
        _probe.Tell($"{_name}:PostRestart:{reason.Message}", Self);
        base.PostRestart(reason);
    }
}

/// <summary>A parent that creates one child from the given props and supervises it with the given strategy.</summary>
internal sealed class SupervisorActor : ReceiveActor
{
    private readonly SupervisorStrategy _strategy;

    public SupervisorActor(Props childProps, SupervisorStrategy strategy, IActorRef probe)
    {
        _strategy = strategy;
        var child = Context.ActorOf(childProps, "child");
        Receive<string>(s => s == "child?", _ => Sender.Tell(child, Self));
        ReceiveAny(m => probe.Tell(m, Sender));
    }

    protected override SupervisorStrategy SupervisorStrategy() => _strategy;
}
