// A link to a console page: a real href (open in a new tab, copy), followed in place without a reload.
import type { ComponentChildren } from 'preact';
import { navigate } from './router.ts';

export function PageLink(props: {
  to: string;
  children: ComponentChildren;
  id?: string;
  class?: string;
  'aria-current'?: 'page';
  'data-devices-link'?: boolean;
}) {
  const { to, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={to}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
