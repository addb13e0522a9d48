namespace Courier.Actors.Runtime.Internal;

/// <summary>The user guardian (<c>/user</c>): parent of top-level actors, supervising them with the default strategy.</summary>
internal sealed class GuardianActor : ActorBase
{
    protected override bool Receive(object message) => false;
}
